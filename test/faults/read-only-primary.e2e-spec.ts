// A primary that turns read-only under the service (a demoted primary still answering, a
// default_transaction_read_only switched on: Debian PostgreSQL 15, a throwaway server). The pooled
// connection that met the read-only error (25006) is closed rather than pooled again, a new
// connection that lands on the read-only node is refused before any statement uses it, requests
// answer 503 meanwhile, and the service writes again once the node is writable, without a restart.
import pg from 'pg';
import {
  postgresBinForReplicas,
  startPrimary,
  type Primary,
} from '../../scripts/lib/pg-cluster.mjs';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { SERVICE_UNAVAILABLE } from '../expected-errors.js';
import { createTestApp, type TestApp } from '../test-app.js';

describe('a primary that turns read-only (e2e)', () => {
  let primary: Primary;
  let admin: pg.Client;
  let t: TestApp;

  async function setReadOnly(on: boolean): Promise<void> {
    await admin.query(
      on
        ? 'ALTER SYSTEM SET default_transaction_read_only = on'
        : 'ALTER SYSTEM RESET default_transaction_read_only',
    );
    await admin.query('SELECT pg_reload_conf()');
    // Every session, this one as the service's, applies the reload before its next statement.
    await waitFor(
      'the reload',
      async () =>
        (await admin.query('SHOW default_transaction_read_only')).rows[0]
          .default_transaction_read_only === (on ? 'on' : 'off'),
      5000,
    );
  }

  /** Backend pids of the service's connections. */
  const servicePids = async () =>
    (
      await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = 'users-service' ORDER BY pid`,
      )
    ).rows.map((row) => row.pid);

  beforeAll(async () => {
    if (!postgresBinForReplicas()) throw new Error('Debian PostgreSQL 15 is needed');
    primary = await startPrimary({ database: 'users_read_only_test' });
    admin = new pg.Client({ connectionString: primary.url });
    await admin.connect();
    // One pooled connection, so the test knows which one met the read-only error.
    t = await createTestApp({ env: { DATABASE_URL: primary.url, DB_POOL_SIZE: '1' } });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await admin?.end();
    await primary?.stop();
  });

  it('closes the connection that met 25006, refuses new ones on the read-only node, and recovers', async () => {
    const created = await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    const [pooled] = await servicePids();
    expect(pooled).toEqual(expect.any(Number));

    await setReadOnly(true);
    // The pooled connection sees the reloaded setting at its next statement.
    const refused = await t.http().post('/users').send({ name: 'Bob' }).expect(503);
    expect(refused.body).toEqual(SERVICE_UNAVAILABLE);
    await waitFor(
      'the connection that met 25006 to close',
      async () => !(await servicePids()).includes(pooled),
    );

    // Every new connection lands on the read-only node and is refused before use: reads too
    // answer 503 (a demoted primary may be behind the new one), readiness fails, and no
    // connection of the service stays open there.
    await waitFor(
      'readiness to fail',
      async () => (await t.http().get('/health/ready')).status === 503,
      5000,
    );
    const read = await t.http().get(`/users/${created.body.id}`).expect(503);
    expect(read.body).toEqual(SERVICE_UNAVAILABLE);
    await waitFor(
      'no connection left on the read-only node',
      async () => (await servicePids()).length === 0,
    );

    await setReadOnly(false);
    await waitFor(
      'readiness once the node is writable',
      async () => (await t.http().get('/health/ready')).status === 200,
      5000,
    );
    await t.http().post('/users').send({ name: 'Cyd' }).expect(201);
  });
});
