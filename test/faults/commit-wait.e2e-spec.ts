// Nothing the service does cuts short a commit's wait for the synchronous standby (Debian
// PostgreSQL 15: a primary with a synchronous standby, test/support/sync-standby.ts). Cut short,
// PostgreSQL commits locally with only a warning and shows the row to every reader, though a
// failover to the standby takes it back. So while the standby is away a write answers 503 and
// stays invisible: past the statement timeout, when its client goes away, when the service shuts
// down, and when a cancel request meant for an earlier statement arrives late (the cancel names a
// backend, not a statement). The primary's log never says the wait was cancelled.
import { ChangesRepository } from '../../src/changes/changes.repository.js';
import { SERVICE_UNAVAILABLE } from '../support/expected-errors.js';
import { startSyncPair, type SyncPair } from '../support/sync-standby.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/service-process.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const STATEMENT_TIMEOUT_MS = 2000;

describe('commits waiting for the synchronous standby are never cut short (e2e)', () => {
  let pair: SyncPair;
  let proxy: TcpProxy;
  let t: TestApp;

  /** The user as every reader sees it now, straight from the primary. */
  const stored = async (id: number) =>
    (
      await pair.admin.query<{ name: string; version: number }>(
        'SELECT name, version FROM users WHERE id = $1',
        [id],
      )
    ).rows[0];

  /** An app whose connections to the primary go through `proxy`, one pooled connection. */
  const appThroughProxy = () => {
    const url = new URL(pair.primary.url);
    url.host = `127.0.0.1:${proxy.port}`;
    return createTestApp({
      env: {
        DATABASE_URL: url.toString(),
        DB_POOL_SIZE: '1',
        DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        DB_CONNECT_TIMEOUT_MS: '5000',
        IDEMPOTENCY_WAIT_MS: '500',
      },
    });
  };

  beforeAll(async () => {
    pair = await startSyncPair('users_commit_wait_test');
    proxy = new TcpProxy('127.0.0.1', pair.primary.port);
    await proxy.start();
    t = await appThroughProxy();
  }, 120_000);

  afterEach(async () => {
    proxy.delayNewConnections(0);
    await pair.requireStandby('*');
    await waitFor(
      'no commit waiting for the standby',
      async () => (await pair.waitingCommits()) === 0,
    );
    // The property of the whole spec: no wait was ever cut short.
    expect(pair.cancelledWaits()).toEqual([]);
  });

  afterAll(async () => {
    await t?.close();
    await proxy?.cut();
    await pair?.stop();
  });

  const unknownOutcomes = async () =>
    Number(
      /^db_commit_outcome_unknown_total (\d+)$/m.exec(
        await (await fetch(t.metricsUrl)).text(),
      )?.[1],
    );

  const createUser = async (name: string) =>
    (await t.http().post('/users').send({ name }).expect(201)).body.id as number;

  it('answers a PATCH past the statement timeout with 503 and shows the old version until the standby confirms', async () => {
    const id = await createUser('Ada');
    const unknownBefore = await unknownOutcomes();
    await pair.requireStandby('absent_standby');
    const res = await t.http().patch(`/users/${id}`).send({ name: 'Ada L.' }).expect(503);
    expect(res.body).toEqual(SERVICE_UNAVAILABLE);
    // Counted, for the alert on commits of unknown outcome.
    expect((await unknownOutcomes()) - unknownBefore).toBe(1);
    expect(await stored(id)).toEqual({ name: 'Ada', version: 1 });
    await t
      .http()
      .get(`/users/${id}`)
      .expect(200)
      .expect(({ body }) => expect(body.name).toBe('Ada'));
    expect(await pair.waitingCommits()).toBe(1);
    await pair.requireStandby('*');
    await waitFor('the PATCH to take effect', async () => (await stored(id))?.version === 2);
    expect(await stored(id)).toEqual({ name: 'Ada L.', version: 2 });
  });

  it("never cancels the change feed's purge, a SELECT that writes: it waits for the standby", async () => {
    await createUser('Fay');
    // Every event is past a retention of 1 hour: the purge deletes them and moves the watermark.
    await pair.admin.query(`UPDATE user_changes SET "at" = now() - interval '2 hours'`);
    const unknownBefore = await unknownOutcomes();
    await pair.requireStandby('absent_standby');
    const purge = await t.app
      .get(ChangesRepository)
      .purgeExpired(1)
      .catch((error: Error) => error);
    expect(purge).toMatchObject({ name: 'CommitOutcomeUnknownError' });
    expect((await unknownOutcomes()) - unknownBefore).toBe(1);
    // Still waiting, not committed locally: the events are all there for every reader.
    expect(await pair.waitingCommits()).toBe(1);
    const { rows } = await pair.admin.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM user_changes',
    );
    expect(rows[0].n).toBeGreaterThan(0);
  });

  it('goes on waiting when the client goes away, and shows nothing meanwhile', async () => {
    const id = await createUser('Bob');
    await pair.requireStandby('absent_standby');
    const gone = await fetch(`${t.url}/users/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bob B.' }),
      signal: AbortSignal.timeout(300),
    }).catch((error: Error) => error.name);
    expect(gone).toBe('TimeoutError');
    await waitFor(
      'the abandoned PATCH to wait for the standby',
      async () => (await pair.waitingCommits()) === 1,
    );
    // Past the statement timeout the service closed its connection; the commit still waits.
    await waitFor(
      'the pool to have let the connection go',
      async () => (await t.http().get(`/users/${id}`)).status === 200,
    );
    expect(await stored(id)).toEqual({ name: 'Bob', version: 1 });
    expect(await pair.waitingCommits()).toBe(1);
  });

  it('never lets a late cancel request meant for a read reach a later create', async () => {
    const id = await createUser('Cyd');
    await pair.requireStandby('absent_standby');
    const cancelsBefore = proxy.cancelRequests;
    // A read outlives the statement timeout behind a lock; its cancel request travels slowly.
    proxy.delayNewConnections(STATEMENT_TIMEOUT_MS / 2);
    await pair.admin.query('BEGIN');
    await pair.admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    const read = t.http().get(`/users/${id}`);
    const readDone = read.then((res) => res.status);
    await waitFor('the read to be cancelled', () =>
      Promise.resolve(proxy.cancelRequests > cancelsBefore),
    );
    // The read then finishes by itself, before its cancel arrives: it answers.
    await pair.admin.query('ROLLBACK');
    expect(await readDone).toBe(200);
    // A keyed create follows at once. Had the read's connection gone back to the pool, the late
    // cancel would land on this create's COMMIT while it waits for the standby: PostgreSQL would
    // commit it locally, and its retry would replay a 201 the standby never got.
    const create = await t
      .http()
      .post('/users')
      .set('Idempotency-Key', 'late-cancel')
      .send({ name: 'Dee' });
    expect(create.status).toBe(503);
    expect(create.body).toEqual(SERVICE_UNAVAILABLE);
    const { rows } = await pair.admin.query(`SELECT id FROM users WHERE name = 'Dee'`);
    expect(rows).toEqual([]);
  });

  it('leaves a waiting write waiting when the service shuts down', async () => {
    const id = await createUser('Eve');
    const closing = await appThroughProxy();
    await pair.requireStandby('absent_standby');
    const patch = closing.http().patch(`/users/${id}`).send({ name: 'Eve E.' });
    const answered = patch.then((res) => res.status);
    await waitFor(
      'the PATCH to wait for the standby',
      async () => (await pair.waitingCommits()) === 1,
    );
    await closing.close();
    expect(await answered).toBe(503);
    expect(await stored(id)).toEqual({ name: 'Eve', version: 1 });
    expect(await pair.waitingCommits()).toBe(1);
  });
});
