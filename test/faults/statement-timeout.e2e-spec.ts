// DB_STATEMENT_TIMEOUT_MS bounds every statement the service sends, whichever way pg is called:
// the callback form (pg's Pool#query: the hot reads, creates and replica reads) and the promise
// form (TypeORM). A statement that cannot commit (one its author marked as a read, a statement
// inside a transaction block) is cancelled (57014) and its connection never used again; a
// statement that can commit (any unmarked statement outside a transaction block, `SELECT f()`
// included, a COMMIT, or anything with a COMMIT queued behind it) is never cancelled: its
// connection is closed and the server's backend goes on. A text of several statements that does
// not end with COMMIT is never sent. A server-side statement_timeout, which would cancel commits,
// is refused.
import pg from 'pg';
import { databaseClient, isFinalFailure } from '../../src/database/database-client.js';
import { isFailoverError } from '../../src/database/failover-retry.js';
import { queryConfig, reads, StatementRefusedError } from '../../src/database/statement.js';
import { setPipeline } from '../../src/internals/pg-client.js';
import { waitFor } from '../support/service-process.js';
import { scratchDatabase, testDatabaseUrl } from '../support/test-app.js';

const TIMEOUT_MS = 300;
/** A read that outlives the timeout, marked as a read by its author. */
const SLOW_READ = queryConfig(reads('SELECT pg_sleep(30)'));

describe('the statement timeout (databaseClient)', () => {
  let pool: pg.Pool;
  let admin: pg.Client;

  const backendOf = async (client: pg.ClientBase) =>
    (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  /** What a backend is doing, as pg_stat_activity says (undefined once it is gone). */
  const activity = async (pid: number) =>
    (
      await admin.query<{ state: string; wait_event_type: string | null; query: string }>(
        'SELECT state, wait_event_type, query FROM pg_stat_activity WHERE pid = $1',
        [pid],
      )
    ).rows[0];

  beforeAll(async () => {
    pool = new pg.Pool({
      connectionString: testDatabaseUrl(),
      max: 2,
      Client: databaseClient(TIMEOUT_MS),
    });
    admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    await admin.query('CREATE TABLE IF NOT EXISTS statement_timeout_probe (n int)');
    // A function that writes, called by a SELECT.
    await admin.query(
      `CREATE OR REPLACE FUNCTION statement_timeout_probe_add(n int) RETURNS int LANGUAGE sql
         AS $$ INSERT INTO statement_timeout_probe VALUES (n) RETURNING n $$`,
    );
  });

  afterAll(async () => {
    await admin.query('DROP FUNCTION IF EXISTS statement_timeout_probe_add(int)');
    await admin.query('DROP TABLE IF EXISTS statement_timeout_probe');
    await admin.end();
    await pool.end();
  });

  it("cancels a read sent through the pool's query (callback form)", async () => {
    await expect(pool.query(SLOW_READ)).rejects.toMatchObject({ code: '57014' });
  });

  it("cancels a read sent through a client's promise form, then never uses that connection again", async () => {
    const client = await pool.connect();
    const pid = await backendOf(client);
    try {
      await expect(client.query(SLOW_READ)).rejects.toMatchObject({ code: '57014' });
      // A cancel request names a backend, not a statement: a late one would land on whatever
      // ran next, so nothing runs next on this connection.
      await expect(client.query('SELECT 1')).rejects.toThrow(/not queryable/);
    } finally {
      client.release();
    }
    const next = await pool.connect();
    try {
      expect(await backendOf(next)).not.toBe(pid);
    } finally {
      next.release();
    }
  });

  it('leaves statements that finish in time alone, and the connection usable', async () => {
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    const client = await pool.connect();
    try {
      expect((await client.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
      expect((await client.query('SELECT 3 AS three')).rows).toEqual([{ three: 3 }]);
    } finally {
      client.release();
    }
  });

  /**
   * Sends `sql` outside a transaction while the probe table is locked, so that it outlives the
   * timeout before it writes. @returns its failure and its backend's activity at that moment;
   * the row it writes once the lock is gone is then checked against `written`.
   */
  const outliveTimeoutBehindLock = async (sql: string, written: number) => {
    await admin.query('TRUNCATE statement_timeout_probe');
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE statement_timeout_probe IN ACCESS EXCLUSIVE MODE');
    const client = await pool.connect();
    const pid = await backendOf(client);
    let failure: unknown;
    try {
      failure = await client.query(sql).catch((error: unknown) => error);
    } finally {
      client.release();
    }
    const backend = await activity(pid);
    await admin.query('COMMIT');
    await waitFor('the write to finish', async () => (await activity(pid)) === undefined);
    expect((await admin.query('SELECT n FROM statement_timeout_probe')).rows).toEqual([
      { n: written },
    ]);
    return { failure, backend };
  };

  it('never cancels a write outside a transaction: it closes the connection, and the server finishes the write', async () => {
    const { failure, backend } = await outliveTimeoutBehindLock(
      'INSERT INTO statement_timeout_probe VALUES (1)',
      1,
    );
    // The caller learns that the outcome is unknown, and must not retry.
    expect(failure).toMatchObject({ name: 'CommitOutcomeUnknownError', code: '08007' });
    expect(isFinalFailure(failure)).toBe(true);
    expect(isFailoverError(failure)).toBe(false);
    // Not cancelled: the backend still waited for the lock, its write still to come.
    expect(backend).toMatchObject({ state: 'active', wait_event_type: 'Lock' });
  });

  it('never cancels an unmarked SELECT outside a transaction: the function it calls may write', async () => {
    const { failure, backend } = await outliveTimeoutBehindLock(
      'SELECT statement_timeout_probe_add(7)',
      7,
    );
    expect(failure).toMatchObject({ name: 'CommitOutcomeUnknownError', code: '08007' });
    expect(backend).toMatchObject({ state: 'active', wait_event_type: 'Lock' });
  });

  it.each([
    ['a read and then a write', 'SELECT 1; SELECT statement_timeout_probe_add(8)'],
    ['a write and then a read', 'SELECT statement_timeout_probe_add(8); SELECT 1'],
    ['a COMMIT in the middle', 'BEGIN; SELECT statement_timeout_probe_add(8); COMMIT; SELECT 1'],
  ])(
    'sends nothing of several statements that do not end with COMMIT: %s',
    async (_shape, text) => {
      await admin.query('TRUNCATE statement_timeout_probe');
      await expect(pool.query(text)).rejects.toThrow(StatementRefusedError);
      const client = await pool.connect();
      try {
        await expect(client.query(text)).rejects.toThrow(/must end with COMMIT/);
        // The connection is fine: nothing was sent on it.
        expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      } finally {
        client.release();
      }
      expect((await admin.query('SELECT n FROM statement_timeout_probe')).rows).toEqual([]);
    },
  );

  it('sends several statements that end with COMMIT', async () => {
    await admin.query('TRUNCATE statement_timeout_probe');
    const results = await pool.query('BEGIN; SELECT statement_timeout_probe_add(9); COMMIT');
    expect((results as unknown as pg.QueryResult[]).map((result) => result.command)).toEqual([
      'BEGIN',
      'SELECT',
      'COMMIT',
    ]);
    expect((await admin.query('SELECT n FROM statement_timeout_probe')).rows).toEqual([{ n: 9 }]);
  });

  it('never cancels a statement with a COMMIT queued behind it (pipeline mode)', async () => {
    const client = await pool.connect();
    const pid = await backendOf(client);
    setPipeline(client, true);
    const sent = ['BEGIN', 'SELECT pg_sleep(2)', 'COMMIT'].map((sql) =>
      client.query(sql).then(
        () => 'ok',
        (error: { name?: string; code?: string }) => error.name ?? error.code,
      ),
    );
    const [, sleep, commit] = await Promise.all(sent);
    client.release(true);
    expect({ sleep, commit }).not.toEqual({ sleep: 'ok', commit: 'ok' });
    expect(commit).toBe('CommitOutcomeUnknownError');
    // The sleep was not cancelled: it runs on, on a backend whose client has gone.
    expect(await activity(pid)).toMatchObject({ query: 'SELECT pg_sleep(2)', state: 'active' });
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  });

  it('marks a failure that outlived it: a keyed create answers it rather than retrying', async () => {
    const timedOut: unknown = await pool.query(SLOW_READ).catch((error) => error);
    expect(isFinalFailure(timedOut)).toBe(true);
    expect(isFailoverError(timedOut)).toBe(false);

    // A connection the server closed in time is a failover error, retried.
    const client = await pool.connect();
    const terminated: unknown = await client
      .query('SELECT pg_terminate_backend(pg_backend_pid())')
      .catch((error) => error);
    client.release(true);
    expect(isFinalFailure(terminated)).toBe(false);
    expect(isFailoverError(terminated)).toBe(true);

    const failed: unknown = await pool.query('SELECT 1 / 0').catch((error) => error);
    expect(isFinalFailure(failed)).toBe(false);
    expect(isFailoverError(failed)).toBe(false);
  });

  // Each set for the database, as an operator would for the service's role or database.
  const refused: [setting: string, value: string, named: string][] = [
    ['statement_timeout', '5s', 'statement_timeout = 5s'],
    ['idle_in_transaction_session_timeout', '100ms', 'idle_in_transaction_session_timeout = 100ms'],
    ['synchronous_commit', 'local', 'synchronous_commit = local'],
    ['synchronous_commit', 'off', 'synchronous_commit = off'],
  ];
  // PostgreSQL 17 and later only: on an older server, the check finds nothing to refuse.
  const hasTransactionTimeout = async () =>
    (await admin.query("SELECT current_setting('transaction_timeout', true) AS value")).rows[0]
      .value !== null;

  it.each(refused)(
    'refuses a primary connection when the server sets %s = %s, until it is reset',
    async (setting, value, named) => {
      await expectRefusedUntilReset(setting, value, named);
    },
  );

  it('refuses transaction_timeout where the server has it (PostgreSQL 17+)', async () => {
    if (await hasTransactionTimeout()) {
      await expectRefusedUntilReset('transaction_timeout', '5s', 'transaction_timeout = 5s');
    } else {
      await expect(connectsToScratch()).resolves.toBe(1);
    }
  });

  it.each([
    ['idle_in_transaction_session_timeout', '10s'],
    ['synchronous_commit', 'remote_apply'],
  ])('accepts %s = %s, which cuts no commit short', async (setting, value) => {
    await expect(connectsToScratch({ [setting]: value })).resolves.toBe(1);
  });

  /** `use` of a primary pool on a scratch database with `settings` set for it. */
  async function withScratchPrimary<T>(
    settings: Record<string, string>,
    use: (primary: pg.Pool, name: string) => Promise<T>,
  ): Promise<T> {
    const database = await scratchDatabase(`connect_check_test_${process.pid}`);
    const name = new URL(database.url).pathname.slice(1);
    for (const [setting, value] of Object.entries(settings)) {
      await admin.query(`ALTER DATABASE ${name} SET ${setting} = '${value}'`);
    }
    const primary = new pg.Pool({
      connectionString: database.url,
      Client: databaseClient(TIMEOUT_MS, { requireWritable: true }),
    });
    try {
      return await use(primary, name);
    } finally {
      await primary.end();
      // pg-pool's end() returns before its connections have closed; one still closing when the
      // drop terminates it fails on the pool, which has no one left to listen.
      await waitFor('the pool to close its connections', async () => {
        const { rows } = await admin.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
          [name],
        );
        return rows[0].n === 0;
      });
      await database.drop();
    }
  }

  /** SELECT 1's answer on a scratch primary with `settings`. */
  const connectsToScratch = (settings: Record<string, string> = {}) =>
    withScratchPrimary(
      settings,
      async (primary) => (await primary.query<{ one: number }>('SELECT 1 AS one')).rows[0].one,
    );

  const expectRefusedUntilReset = (setting: string, value: string, named: string) =>
    withScratchPrimary({ [setting]: value }, async (primary, name) => {
      await expect(primary.query('SELECT 1')).rejects.toMatchObject({
        code: 'F0000',
        message: expect.stringContaining(named),
      });
      await admin.query(`ALTER DATABASE ${name} RESET ${setting}`);
      // The gate backs off after a failed attempt; the next one succeeds.
      await waitFor('a connection once the setting is gone', async () => {
        const { rows } = await primary.query('SELECT 1 AS one');
        return rows[0].one === 1;
      });
    });
});
