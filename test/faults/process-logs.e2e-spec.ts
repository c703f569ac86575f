import {
  buildService,
  type ServiceProcess,
  startService,
  waitFor,
  waitUntilReady,
} from '../support/service-process.js';
import { testDatabaseUrl } from '../support/test-app.js';

/** Every line the process wrote, each of which must be one JSON object. */
function lines(service: ServiceProcess): string[] {
  return service
    .output()
    .split('\n')
    .filter((line) => line.length > 0);
}

function expectEveryLineJson(service: ServiceProcess): Record<string, unknown>[] {
  const all = lines(service);
  expect(all.length).toBeGreaterThan(0);
  const notJson = all.filter((line) => {
    try {
      const value: unknown = JSON.parse(line);
      return typeof value !== 'object' || value === null || Array.isArray(value);
    } catch {
      return true;
    }
  });
  expect(notJson).toEqual([]);
  return all.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('every line the process writes is one JSON object (e2e)', () => {
  beforeAll(() => buildService());

  it('through boot, requests, a drained shutdown', async () => {
    const service = await startService({
      NODE_ENV: 'production',
      // Production must choose; these logs are about requests, not tokens.
      AUTH_MODE: 'none',
      DATABASE_URL: testDatabaseUrl(),
      MIGRATE_ON_BOOT: 'true',
      SHUTDOWN_DRAIN_MS: '1000',
      LOG_LEVEL: 'debug',
    });
    try {
      await waitUntilReady(service);
      await fetch(`${service.url}/users/999999`);
      await fetch(`${service.url}/users`, { method: 'POST', body: 'not json' });
      service.child.kill('SIGTERM');
      // Readiness during the planned drain: 503 (once the signal is handled), and not an error
      // in the logs.
      await waitFor(
        'readiness 503 during the drain',
        async () => (await fetch(`${service.url}/health/ready`)).status === 503,
      );
      expect(await service.exited).toEqual({ code: 0, signal: null });
    } finally {
      await service.stop();
    }
    const records = expectEveryLineJson(service);
    const messages = records.map((record) => String(record.msg ?? record.message));
    expect(messages[0]).toBe('Starting Nest application...');
    expect(messages).toContain('stopped');
    const drainProbe = records.find(
      (record) =>
        (record.req as { path?: string } | undefined)?.path === '/health/ready' &&
        (record.res as { statusCode?: number }).statusCode === 503,
    );
    expect(drainProbe).toMatchObject({ level: 'info', res: { statusCode: 503 } });
    // Refused before routing, but by a route that exists: labelled with it.
    const refused = records.find(
      (record) => (record.res as { statusCode?: number })?.statusCode === 415,
    );
    expect(refused).toMatchObject({ route: '/users' });
  });

  it('through a boot refused for a bad variable', async () => {
    const service = await startService({ DATABASE_URL: testDatabaseUrl(), PORT: 'eighty' });
    expect((await service.exited).code).toBe(1);
    const records = expectEveryLineJson(service);
    expect(JSON.stringify(records)).toContain('PORT must be an integer number');
  });

  it('through a boot that cannot reach the database', async () => {
    const service = await startService({
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none_test',
      DB_RETRY_ATTEMPTS: '0',
    });
    expect((await service.exited).code).toBe(1);
    expectEveryLineJson(service);
  });
});
