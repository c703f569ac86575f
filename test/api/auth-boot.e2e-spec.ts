// The built service as a process: in production it refuses to start until authentication is
// configured or explicitly waived, and says which variables to set in a JSON log line.
import {
  buildService,
  startService,
  waitUntilReady,
  type ServiceProcess,
} from '../../scripts/lib/service-process.mjs';
import { testDatabaseUrl } from '../support/test-app.js';
import { authEnv, JwksServer, mint, signingKey } from '../support/identity-provider.js';

const jsonLines = (service: ServiceProcess) =>
  service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('authentication at boot (built service)', () => {
  const started: ServiceProcess[] = [];
  const production = () => ({
    NODE_ENV: 'production',
    DATABASE_URL: testDatabaseUrl(),
    MIGRATE_ON_BOOT: 'true',
  });

  beforeAll(() => buildService());

  afterAll(async () => {
    for (const service of started) await service.stop();
  });

  async function start(env: Record<string, string>): Promise<ServiceProcess> {
    const service = await startService({ env });
    started.push(service);
    return service;
  }

  it('refuses production without AUTH_JWKS_URL or AUTH_MODE=none, naming both', async () => {
    const service = await start(production());
    expect((await service.exited).code).toBe(1);
    const refusal = jsonLines(service).find((line) =>
      String(line.msg).includes('invalid configuration'),
    );
    expect(String(refusal?.msg)).toContain('AUTH_JWKS_URL is required when NODE_ENV=production');
    expect(String(refusal?.msg)).toContain('AUTH_MODE=none');
  });

  it('refuses an HMAC algorithm in AUTH_ALGORITHMS', async () => {
    const service = await start({ ...production(), AUTH_MODE: 'none', AUTH_ALGORITHMS: 'HS256' });
    expect((await service.exited).code).toBe(1);
    expect(service.output()).toContain('AUTH_ALGORITHMS must be a comma-separated list');
  });

  it('starts with AUTH_MODE=none, warning that the mesh decides who may call', async () => {
    const service = await start({ ...production(), AUTH_MODE: 'none' });
    await waitUntilReady(service);
    expect(jsonLines(service)).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'AUTH_MODE=none: requests are not authenticated; the mesh decides who may call',
      }),
    );
    expect((await fetch(`${service.url}/users`)).status).toBe(200);
    // Metrics only on METRICS_PORT.
    expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
    expect((await fetch(service.metricsUrl)).status).toBe(200);
  });

  it('starts with a JWKS and then requires tokens', async () => {
    const key = await signingKey('RS256');
    const jwks = await new JwksServer([key]).start();
    try {
      const service = await start({ ...production(), ...authEnv(jwks) });
      await waitUntilReady(service);
      expect((await fetch(`${service.url}/users`)).status).toBe(401);
      const token = await mint(key, { scope: 'users:read' });
      const response = await fetch(`${service.url}/users`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(200);
      expect(service.output()).not.toContain(token);
    } finally {
      await jwks.stop();
    }
  });
});
