import pg from 'pg';
import { waitFor } from '../support/service-process.js';
import { createTestApp, testDatabaseUrl, type TestApp } from '../support/test-app.js';

// The shutdown sequence inside one process, through Nest's lifecycle (app.close() runs the same
// hooks as SIGTERM); shutdown.e2e-spec.ts proves the signal path on the built process.
describe('graceful shutdown (in process)', () => {
  let t: TestApp;
  let db: pg.Client;

  beforeEach(async () => {
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });
  afterEach(async () => {
    await db.query('ROLLBACK');
    // The app is closed by then: empty the tables through this connection.
    await db.query('TRUNCATE users, posts RESTART IDENTITY CASCADE');
    await db.end();
  });

  /** Holds every query on the users table until the returned function is called. */
  async function lockUsers(): Promise<() => Promise<void>> {
    await db.query('BEGIN');
    await db.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    return async () => {
      await db.query('COMMIT');
    };
  }

  const waiting = async () =>
    (
      await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = 'users-service'",
      )
    ).rows[0].n;

  it('fails readiness at once, keeps serving through the drain and finishes in-flight requests', async () => {
    t = await createTestApp({ env: { SHUTDOWN_DRAIN_MS: '300', SHUTDOWN_TIMEOUT_MS: '20000' } });
    const { id } = (await t.http().post('/users').send({ name: 'Ada' }).expect(201)).body;
    const release = await lockUsers();
    const inFlight = fetch(`${t.url}/users/${id}`);
    await waitFor('the request to wait on the lock', async () => (await waiting()) === 1);

    const closed = t.close();
    const ready = await fetch(`${t.url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ ok: false, database: 'down', shuttingDown: true });
    // The kubelet's readiness probe, on the metrics port, sees the same through the drain.
    const probed = await fetch(t.metricsPortUrl('/health/ready'));
    expect(probed.status).toBe(503);
    // Still accepting during the drain: liveness answers.
    expect((await fetch(`${t.url}/health`)).status).toBe(200);

    await release();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id, name: 'Ada' });
    await closed;
  });

  it('closes connections still open after SHUTDOWN_TIMEOUT_MS', async () => {
    t = await createTestApp({ env: { SHUTDOWN_DRAIN_MS: '0', SHUTDOWN_TIMEOUT_MS: '300' } });
    const { id } = (await t.http().post('/users').send({ name: 'Ada' }).expect(201)).body;
    const release = await lockUsers();
    const inFlight = fetch(`${t.url}/users/${id}`).then(
      (res) => res.status,
      (error: Error) => error.message,
    );
    await waitFor('the request to wait on the lock', async () => (await waiting()) === 1);

    const closed = t.close();
    // The request is cut by the forced close, not answered.
    expect(await inFlight).toBe('fetch failed');
    await release();
    await closed;
  });
});
