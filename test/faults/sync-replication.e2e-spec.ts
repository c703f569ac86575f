// Synchronous replication (Debian PostgreSQL 15: a throwaway primary and a pg_basebackup standby):
// a create is acknowledged (201) only once its commit returned cleanly. While the primary waits
// for a synchronous standby that never confirms (synchronous_standby_names naming an absent one),
// a create answers 503 after the statement timeout, never 201, and its commit's wait is never cut
// short: an autocommit INSERT and an idempotent create's COMMIT are abandoned, not cancelled, and
// stay invisible until the standby requirement is met again.
import pg from 'pg';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { CommitOutcomeUnknownError, type Notice } from '../../src/database/commit-outcome.js';
import { databaseClient } from '../../src/database/database-client.js';
import { SERVICE_UNAVAILABLE } from '../support/expected-errors.js';
import { startSyncPair, type SyncPair } from '../support/sync-standby.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const STATEMENT_TIMEOUT_MS = 1000;

describe('synchronous replication: no create is acknowledged before the standby has it (e2e)', () => {
  let pair: SyncPair;
  let t: TestApp;
  const requireStandby = (names: string) => pair.requireStandby(names);

  const usersWithEmail = async (email: string) =>
    Number(
      (await pair.admin.query('SELECT count(*) AS n FROM users WHERE email = $1', [email])).rows[0]
        .n,
    );

  beforeAll(async () => {
    pair = await startSyncPair('users_sync_test');
    t = await createTestApp({
      env: {
        DATABASE_URL: pair.primary.url,
        DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        IDEMPOTENCY_WAIT_MS: String(STATEMENT_TIMEOUT_MS / 2),
        DB_CONNECT_TIMEOUT_MS: '500',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await pair?.stop();
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
    // Synchronous: the standby has both rows as soon as the 201s are sent, in the WAL it had
    // received by then (its replay, which makes them visible there, may follow a moment later).
    const onStandby = new pg.Client({ connectionString: pair.standby.url });
    await onStandby.connect();
    try {
      const [{ received }] = (
        await onStandby.query<{ received: string }>('SELECT pg_last_wal_receive_lsn() AS received')
      ).rows;
      await waitFor(
        'the standby to replay what it had received',
        async () =>
          (
            await onStandby.query<{ done: boolean }>(
              'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done',
              [received],
            )
          ).rows[0].done,
      );
      const { rows } = await onStandby.query(
        'SELECT id FROM users WHERE id = ANY($1) ORDER BY id',
        [[plain.body.id, keyed.body.id]],
      );
      expect(rows).toEqual([{ id: plain.body.id }, { id: keyed.body.id }]);
    } finally {
      await onStandby.end();
    }
  });

  it('never cuts short the wait of a create without Idempotency-Key: 503, and the row stays invisible', async () => {
    await requireStandby('absent_standby');
    const started = Date.now();
    const res = await t
      .http()
      .post('/users')
      .send({ name: 'Cyd', email: 'cyd@example.com' })
      .expect(503);
    expect(res.body).toEqual(SERVICE_UNAVAILABLE);
    expect(Date.now() - started).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS);
    // Its implicit commit still waits on the server (the connection was closed, nothing was
    // cancelled), so no reader sees a row that a failover to the standby would take back.
    expect(await usersWithEmail('cyd@example.com')).toBe(0);
    expect(await pair.waitingCommits()).toBe(1);
    await requireStandby('*');
    await waitFor(
      'the waiting commit',
      async () => (await usersWithEmail('cyd@example.com')) === 1,
    );
    expect(pair.cancelledWaits()).toEqual([]);
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
    expect(await pair.waitingCommits()).toBe(1);

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
  // From here on: each leaves a cut-short wait in the primary's log, which the tests above check
  // is empty.
  it('answers a commit whose wait an operator cut short as unknown, knowing the warning by its routine', async () => {
    await requireStandby('absent_standby');
    const client = new (databaseClient(0))({ connectionString: pair.primary.url });
    await client.connect();
    const notices: Notice[] = [];
    client.on('notice', (notice: Notice) => notices.push(notice));
    try {
      const { pid } = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0] as {
        pid: number;
      };
      const insert = client
        .query("INSERT INTO users (name, email) VALUES ('Gus', 'gus@example.com')")
        .catch((error: unknown) => error);
      await waitFor('the insert waiting for the standby', async () => {
        const { rowCount } = await pair.admin.query(
          "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'SyncRep'",
          [pid],
        );
        return rowCount === 1;
      });
      await pair.admin.query('SELECT pg_cancel_backend($1)', [pid]);
      expect(await insert).toBeInstanceOf(CommitOutcomeUnknownError);
      // The field the warning is recognised by in any lc_messages.
      expect(notices).toContainEqual(
        expect.objectContaining({ routine: 'SyncRepWaitForLSN', file: 'syncrep.c' }),
      );
    } finally {
      await client.end();
    }
  });
  /** The one session of the service whose commit waits for the standby, once there is one. */
  async function waitingBackend(statement: RegExp = /./): Promise<number> {
    let pid: number | undefined;
    await waitFor('a commit waiting for the standby', async () => {
      const { rows } = await pair.admin.query<{ pid: number; query: string }>(
        `SELECT pid, query FROM pg_stat_activity
          WHERE wait_event = 'SyncRep' AND application_name = 'users-service'`,
      );
      pid = rows.find((row) => statement.test(row.query))?.pid;
      return pid !== undefined;
    });
    return pid!;
  }

  it('replays a keyed create whose wait an operator cut short only once the standby has it', async () => {
    await requireStandby('absent_standby');
    const send = () =>
      t
        .http()
        .post('/users')
        .set('Idempotency-Key', 'sync-cut')
        .send({ name: 'Hal', email: 'hal@example.com' });
    await send().expect(503);
    // An operator cancels the waiting commit: it is visible on the primary, not on the standby.
    await pair.admin.query('SELECT pg_cancel_backend($1)', [await waitingBackend()]);
    await waitFor(
      'the cut-short commit',
      async () => (await usersWithEmail('hal@example.com')) === 1,
    );

    // The retry finds the stored key, but the standby still lacks the outcome: no 201 yet.
    const started = Date.now();
    const early = await send().expect(503);
    expect(early.body).toEqual(SERVICE_UNAVAILABLE);
    // It waited for the standby until the statement timeout, as the first attempt did.
    expect(Date.now() - started).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS);

    await requireStandby('*');
    const replayed = await send().expect(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(
      expect.objectContaining({ name: 'Hal', email: 'hal@example.com' }),
    );
  });

  it("runs a keyed create again itself when a server's shutdown ended its wait, and answers 201 once the standby has it", async () => {
    // A statement timeout longer than the steps below, so that only the termination ends the wait.
    const patient = await createTestApp({
      env: { DATABASE_URL: pair.primary.url, DB_STATEMENT_TIMEOUT_MS: '20000' },
    });
    try {
      await requireStandby('absent_standby');
      const answer = patient
        .http()
        .post('/users')
        .set('Idempotency-Key', 'sync-terminated')
        .send({ name: 'Ivy', email: 'ivy@example.com' })
        .then((res) => res);
      // What a fast shutdown does to each session: its wait ends, its connection with it.
      await pair.admin.query('SELECT pg_terminate_backend($1)', [await waitingBackend()]);
      // The service's own retry meets the stored key; its replay waits for the standby.
      await waitingBackend(/FOR KEY SHARE/);
      expect(await usersWithEmail('ivy@example.com')).toBe(1);
      await requireStandby('*');
      const res = await answer;
      expect(res.status).toBe(201);
      expect(res.body).toEqual(expect.objectContaining({ name: 'Ivy', email: 'ivy@example.com' }));
      expect(await usersWithEmail('ivy@example.com')).toBe(1);
    } finally {
      await patient.close();
    }
  });
});
