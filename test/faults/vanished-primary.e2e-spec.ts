// A primary that vanishes without closing anything (node loss, partition): no reply, no RST, so
// without a bound a statement in flight would wait for TCP to give up (many minutes). The
// statement timeout's cancel cannot reach the server either, so the connection is closed
// DB_CONNECT_TIMEOUT_MS after it: the request answers 503 within about a second here, readiness
// fails, and the service serves again once the database is back.
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { SERVICE_UNAVAILABLE } from '../support/expected-errors.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { createTestAppBehindProxy, type TestApp } from '../support/test-app.js';

const STATEMENT_TIMEOUT_MS = 500;
const CONNECT_TIMEOUT_MS = 500;

describe('a primary that vanishes without closing its connections (e2e)', () => {
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    ({ proxy, ...t } = await createTestAppBehindProxy({
      env: {
        DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        IDEMPOTENCY_WAIT_MS: String(STATEMENT_TIMEOUT_MS / 2),
        DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        // The bounds of one attempt: a keyed create whose attempt needs a new connection is
        // otherwise retried for DB_FAILOVER_RETRY_MS (database-faults.e2e-spec.ts).
        DB_FAILOVER_RETRY_MS: '0',
      },
    }));
  });
  afterAll(() => t.close());

  it('answers 503 within the statement and connect timeouts, then recovers', async () => {
    const created = await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    proxy.freeze();

    for (const send of [
      () => t.http().get(`/users/${created.body.id}`),
      () => t.http().post('/users').send({ name: 'Bob' }),
      () => t.http().post('/users').set('Idempotency-Key', 'vanished').send({ name: 'Cyd' }),
    ]) {
      const started = Date.now();
      const res = await send();
      const elapsed = Date.now() - started;
      expect({ status: res.status, body: res.body as unknown }).toEqual({
        status: 503,
        body: SERVICE_UNAVAILABLE,
      });
      // A pooled connection: cancelled at 500 ms, closed 500 ms later. A new one: refused after
      // the 500 ms connect timeout, or at once while attempts back off.
      expect(elapsed).toBeLessThan(STATEMENT_TIMEOUT_MS + CONNECT_TIMEOUT_MS + 1500);
    }
    await waitFor(
      'readiness to fail',
      async () => (await t.http().get('/health/ready')).status === 503,
      5000,
    );

    await proxy.restore();
    await waitFor(
      'readiness after the restore',
      async () => (await t.http().get('/health/ready')).status === 200,
      5000,
    );
    expect((await t.http().get(`/users/${created.body.id}`).expect(200)).body).toEqual(
      expect.objectContaining({ id: created.body.id, name: 'Ada' }),
    );
  });
});
