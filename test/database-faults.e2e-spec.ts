import { waitFor } from '../scripts/lib/service-process.mjs';
import { capturingLogger } from './capturing-logger.js';
import { SERVICE_UNAVAILABLE } from './expected-errors.js';
import type { TcpProxy } from './tcp-proxy.js';
import { createTestAppBehindProxy, type TestApp } from './test-app.js';

describe('database unreachable (e2e)', () => {
  let proxy: TcpProxy;
  let t: TestApp;

  const captured = capturingLogger();

  beforeAll(async () => {
    ({ proxy, ...t } = await createTestAppBehindProxy({ logger: captured.logger }));
  });
  afterAll(() => t.close());

  it('answers 503 while the database is down and recovers without a restart', async () => {
    const created = await t.http().post('/users').send({ name: 'Ada' }).expect(201);
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
    const users = await t.http().get('/users').expect(200);
    expect(users.body.map((user: { name: string }) => user.name)).toEqual(['Ada']);
  });
});
