import { waitFor } from '../../scripts/lib/service-process.mjs';
import { capturingLogger } from '../support/capturing-logger.js';
import { SERVICE_UNAVAILABLE } from '../support/expected-errors.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { createTestAppBehindProxy, type TestApp } from '../support/test-app.js';

// One capturing logger for the file: Nest's Logger instances write to the logger of the app
// created first in a process.
const captured = capturingLogger();

describe('database unreachable (e2e)', () => {
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    ({ proxy, ...t } = await createTestAppBehindProxy({ logger: captured.logger }));
  });
  afterAll(() => t.close());

  const scrape = async () => (await fetch(t.metricsUrl)).text();
  const primaryUp = (metrics: string) => /^db_primary_up 1$/m.test(metrics);

  it('answers 503 while the database is down and recovers without a restart', async () => {
    const created = await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    await waitFor('db_primary_up 1', async () => primaryUp(await scrape()), 5000);
    await proxy.cut();

    const unavailable = await t
      .http()
      .get(`/users/${created.body.id}`)
      .set('x-request-id', 'outage-1')
      .expect(503);
    expect(unavailable.body).toEqual(SERVICE_UNAVAILABLE);
    // The warning joins the request's other log lines through its id.
    expect(captured.lines()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        requestId: 'outage-1',
        msg: expect.stringContaining('database unavailable'),
      }),
    );
    expect((await t.http().get('/users').expect(503)).body).toEqual(SERVICE_UNAVAILABLE);
    expect((await t.http().post('/users').send({ name: 'Bob' }).expect(503)).body).toEqual(
      SERVICE_UNAVAILABLE,
    );
    const ready = await t.http().get('/health/ready').expect(503);
    expect(ready.body).toEqual({ ok: false, database: 'down', shuttingDown: false });
    // What that readiness check found is what Prometheus scrapes (alert UsersServiceDatabaseDown).
    expect(await scrape()).toMatch(/^db_primary_up 0$/m);
    // Liveness never waits on the database: restarting the pod would not help.
    expect((await t.http().get('/health').expect(200)).body).toEqual({ ok: true });

    await proxy.restore();
    // Connection attempts back off while the database is down (at most a second between two),
    // so the service is back within about a second of the database, not at once.
    await waitFor(
      'readiness after the restore',
      async () => (await t.http().get('/health/ready')).status === 200,
      5000,
    );
    expect((await t.http().get(`/users/${created.body.id}`).expect(200)).body.name).toBe('Ada');
    expect(primaryUp(await scrape())).toBe(true);
    const users = await t.http().get('/users').expect(200);
    expect(users.body.map((user: { name: string }) => user.name)).toEqual(['Ada']);
  });
});

describe('a keyed create while the database is unreachable (e2e)', () => {
  const FAILOVER_RETRY_MS = 1500;
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    ({ proxy, ...t } = await createTestAppBehindProxy({
      logger: captured.logger,
      env: { DB_FAILOVER_RETRY_MS: String(FAILOVER_RETRY_MS) },
    }));
  });
  const retries = async () =>
    Number(
      /^db_failover_retries_total (\d+)$/m.exec(await (await fetch(t.metricsUrl)).text())?.[1],
    );
  afterAll(() => t.close());

  it('is retried by the service until DB_FAILOVER_RETRY_MS is spent, then answers 503', async () => {
    await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    const retriedBefore = await retries();
    await proxy.cut();
    const send = () =>
      t
        .http()
        .post('/users')
        .set('Idempotency-Key', 'unreachable-1')
        .set('x-request-id', 'retried-1')
        .send({ name: 'Bob' });

    const started = Date.now();
    const unavailable = await send().expect(503);
    // Each attempt after the first is counted and logged with the request's id.
    const logged = captured
      .lines()
      .filter(
        (line) =>
          line.level === 'warn' &&
          line.requestId === 'retried-1' &&
          String(line.msg).includes('keyed create run again after a failover error'),
      );
    expect(logged.length).toBeGreaterThan(0);
    expect((await retries()) - retriedBefore).toBe(logged.length);
    const elapsed = Date.now() - started;
    expect(unavailable.body).toEqual(SERVICE_UNAVAILABLE);
    // Refused connections fail at once: answering only now means the service kept retrying,
    // and it starts no attempt past the budget.
    expect(elapsed).toBeGreaterThanOrEqual(FAILOVER_RETRY_MS);
    expect(elapsed).toBeLessThan(FAILOVER_RETRY_MS + 1500);

    await proxy.restore();
    await waitFor(
      'readiness after the restore',
      async () => (await t.http().get('/health/ready')).status === 200,
      5000,
    );
    // Nothing was stored for the key: the create runs now.
    const created = await send().expect(201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
    expect(created.body).toEqual(expect.objectContaining({ name: 'Bob' }));
  });
});
