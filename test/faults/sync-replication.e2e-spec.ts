// Synchronous replication (Debian PostgreSQL 15: a throwaway primary and a pg_basebackup standby):
// a create is acknowledged (201) only once its commit returned cleanly. While the primary waits
// for a synchronous standby that never confirms (synchronous_standby_names naming an absent one),
// a create answers 503 after the statement timeout, never 201: an autocommit INSERT whose wait is
// cancelled (PostgreSQL's warning notice), and an idempotent create whose COMMIT is never
// cancelled but abandoned, staying invisible until the standby requirement is met again.
import pg from 'pg';
import {
  postgresBinForReplicas,
  startPrimary,
  type ClusterServer,
  type Primary,
} from '../../scripts/lib/pg-cluster.mjs';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { SERVICE_UNAVAILABLE } from '../expected-errors.js';
import { createTestApp, type TestApp } from '../test-app.js';

const STATEMENT_TIMEOUT_MS = 1000;

describe('synchronous replication: no create is acknowledged before the standby has it (e2e)', () => {
  let primary: Primary;
  let standby: ClusterServer;
  let admin: pg.Client;
  let t: TestApp;

  /** Sets synchronous_standby_names on the primary and reloads its configuration. */
  async function requireStandby(names: string): Promise<void> {
    await admin.query(`ALTER SYSTEM SET synchronous_standby_names = '${names}'`);
    await admin.query('SELECT pg_reload_conf()');
    await waitFor(
      `synchronous_standby_names = ${names}`,
      async () =>
        (await admin.query('SHOW synchronous_standby_names')).rows[0].synchronous_standby_names ===
        names,
      5000,
    );
  }

  const usersWithEmail = async (email: string) =>
    Number(
      (await admin.query('SELECT count(*) AS n FROM users WHERE email = $1', [email])).rows[0].n,
    );

  beforeAll(async () => {
    if (!postgresBinForReplicas())
      throw new Error("Debian PostgreSQL 15's pg_basebackup is needed");
    primary = await startPrimary({ database: 'users_sync_test' });
    standby = await primary.startStandby();
    admin = new pg.Client({ connectionString: primary.url });
    await admin.connect();
    await requireStandby('*');
    await waitFor(
      'the standby to be synchronous',
      async () =>
        (await admin.query(`SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'`))
          .rowCount === 1,
      10_000,
    );
    t = await createTestApp({
      env: {
        DATABASE_URL: primary.url,
        DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        DB_CONNECT_TIMEOUT_MS: '500',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await admin?.end();
    await standby?.stop();
    await primary?.stop();
  });

  afterEach(async () => {
    await requireStandby('*');
  });

  it('answers 201 while the synchronous standby confirms each commit', async () => {
    const plain = await t
      .http()
      .post('/users')
      .send({ name: 'Ada', email: 'ada@example.com' })
      .expect(201);
    const keyed = await t
      .http()
      .post('/users')
      .set('Idempotency-Key', 'sync-ok')
      .send({ name: 'Bob', email: 'bob@example.com' })
      .expect(201);
    // Synchronous: the standby has both rows as soon as the 201s are sent.
    const onStandby = new pg.Client({ connectionString: standby.url });
    await onStandby.connect();
    try {
      const { rows } = await onStandby.query(
        'SELECT id FROM users WHERE id = ANY($1) ORDER BY id',
        [[plain.body.id, keyed.body.id]],
      );
      expect(rows).toEqual([{ id: plain.body.id }, { id: keyed.body.id }]);
    } finally {
      await onStandby.end();
    }
  });

  it('answers 503, not 201, when the wait of a create without Idempotency-Key is cancelled', async () => {
    await requireStandby('absent_standby');
    const started = Date.now();
    const res = await t
      .http()
      .post('/users')
      .send({ name: 'Cyd', email: 'cyd@example.com' })
      .expect(503);
    expect(res.body).toEqual(SERVICE_UNAVAILABLE);
    expect(Date.now() - started).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS);
    // The cancel ended the wait: PostgreSQL committed locally, which is exactly why the service
    // could not answer 201 (a failover to the standby would lose this row).
    expect(await usersWithEmail('cyd@example.com')).toBe(1);
  });

  it('never cancels a COMMIT: an idempotent create answers 503, stays invisible until the standby confirms, and its retry replays 201', async () => {
    await requireStandby('absent_standby');
    const send = () =>
      t
        .http()
        .post('/users')
        .set('Idempotency-Key', 'sync-wait')
        .send({ name: 'Dee', email: 'dee@example.com' });

    const first = await send().expect(503);
    expect(first.body).toEqual(SERVICE_UNAVAILABLE);
    // The COMMIT still waits on the server (its connection was closed, not cancelled), so the
    // row is not visible to anyone: nothing was acknowledged that the standby lacks.
    expect(await usersWithEmail('dee@example.com')).toBe(0);
    const waiting = await admin.query(
      `SELECT 1 FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND application_name = 'users-service'`,
    );
    expect(waiting.rowCount).toBe(1);

    // The standby requirement is met again: the waiting commit completes.
    await requireStandby('*');
    await waitFor(
      'the waiting commit',
      async () => (await usersWithEmail('dee@example.com')) === 1,
    );
    const retried = await send().expect(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.body).toEqual(
      expect.objectContaining({ name: 'Dee', email: 'dee@example.com' }),
    );
  });

  it('still answers 201 after those failures: the abandoned connection left the pool', async () => {
    await t.http().post('/users').send({ name: 'Eve', email: 'eve@example.com' }).expect(201);
    await t
      .http()
      .post('/users')
      .set('Idempotency-Key', 'sync-after')
      .send({ name: 'Fay', email: 'fay@example.com' })
      .expect(201);
  });
});
