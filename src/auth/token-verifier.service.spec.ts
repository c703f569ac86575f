import { pino } from 'pino';
import {
  authEnv,
  JwksServer,
  mint,
  signingKey,
  type SigningKey,
} from '../../test/support/identity-provider.js';
import { AppConfig } from '../config/app-config.js';
import { validateEnv } from '../config/env.validation.js';
import { AuthenticationError, InsufficientScopeError } from './auth-errors.js';
import { TokenVerifierService } from './token-verifier.service.js';

const READ = { kind: 'scope', scope: 'users:read' } as const;

describe(`${TokenVerifierService.name}.authorize`, () => {
  let jwks: JwksServer;
  let key: SigningKey;
  let verifier: TokenVerifierService;

  beforeAll(async () => {
    key = await signingKey('ES256');
    jwks = await new JwksServer([key]).start();
    verifier = new TokenVerifierService(
      AppConfig.fromEnv(validateEnv(authEnv(jwks))),
      pino({ level: 'silent' }),
    );
    expect(await verifier.refresh()).toBe(true);
  });

  afterAll(() => jwks.stop());

  it('checks a new token asynchronously, then answers its repetitions at once', async () => {
    const header = `Bearer ${await mint(key, { sub: 'ada', azp: 'web', scope: 'users:read' })}`;
    const first = verifier.authorize([header], READ);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toEqual({ sub: 'ada', clientId: 'web' });
    const again = verifier.authorize([header], READ);
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toEqual({ sub: 'ada', clientId: 'web' });
  });

  it('refuses a known token without the scope, and a malformed header, at once', async () => {
    const header = `Bearer ${await mint(key, { scope: 'users:write' })}`;
    await expect(verifier.authorize([header], READ)).rejects.toBeInstanceOf(InsufficientScopeError);
    expect(() => verifier.authorize([header], READ)).toThrow(InsufficientScopeError);
    expect(() => verifier.authorize(['Basic eDp5'], READ)).toThrow(
      new AuthenticationError('malformed'),
    );
  });

  it('rejects an invalid token each time it is sent (refusals are not cached)', async () => {
    const expired = `Bearer ${await mint(key, { scope: 'users:read' }, { expiresIn: -120 })}`;
    for (let i = 0; i < 2; i++) {
      await expect(verifier.authorize([expired], READ)).rejects.toMatchObject({
        reason: 'expired',
      });
    }
  });
});
