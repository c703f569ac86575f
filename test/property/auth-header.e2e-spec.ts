// Property-based test (fast-check) of the Authorization header with authentication on: whatever
// a client sends there (any header values, Bearer with random or mangled tokens, several
// headers), the answer is a 401 with {"error"} and a WWW-Authenticate challenge, never a 5xx, and
// a valid token still passes. Seeded and bounded like the other property tests in test/property/ (FUZZ_SEED, FUZZ_RUNS).
import fc from 'fast-check';
import { send } from '../../scripts/lib/http-client.mjs';
import { type TestApp } from '../support/test-app.js';
import { type AuthApp, mint, startAuthApp } from '../support/identity-provider.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

/** Header values Node will send: visible ASCII and spaces, no CR/LF. */
const headerValue = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,300}$/);
const base64url = fc.stringMatching(/^[A-Za-z0-9_-]{0,200}$/);

describe('Authorization header, any value (property)', () => {
  let app: AuthApp;
  let t: TestApp;
  let valid: string;

  beforeAll(async () => {
    app = await startAuthApp('RS256');
    t = app.t;
    valid = await mint(app.key, { scope: 'users:read' });
  });

  afterAll(() => app?.close());

  /** A token-like value: random segments, or a valid token with one segment replaced. */
  const tokenish = fc.oneof(
    fc.tuple(base64url, base64url, base64url).map((parts) => parts.join('.')),
    fc
      .tuple(fc.integer({ min: 0, max: 2 }), base64url)
      .map(([index, part]) => valid.split('.').with(index, part).join('.')),
    headerValue,
  );
  const authorization = fc.oneof(
    headerValue,
    tokenish.map((token) => `Bearer ${token}`),
    fc.array(
      tokenish.map((token) => `Bearer ${token}`),
      { minLength: 2, maxLength: 3 },
    ),
  );

  it('answers 401 {error} with a Bearer challenge, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(authorization, async (value) => {
        const response = await send(t.url, { path: '/users', headers: { authorization: value } });
        const passes = value === `Bearer ${valid}`;
        expect(response.status).toBe(passes ? 200 : 401);
        if (!passes) {
          expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="users"/);
          expect(Object.keys(JSON.parse(response.text))).toEqual(['error']);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The property's own check: a valid token is accepted.
    const ok = await send(t.url, { path: '/users', headers: { authorization: `Bearer ${valid}` } });
    expect(ok.status).toBe(200);
  });
});
