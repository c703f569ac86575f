// DB_STATEMENT_TIMEOUT_MS bounds every statement the service sends, whichever way pg is called:
// the callback form (pg's Pool#query: the hot reads, creates and replica reads) and the promise
// form (TypeORM). The server stops the statement: it fails with 57014 (query_canceled).
import pg from 'pg';
import {
  cancellingClient,
  outlivedStatementTimeout,
} from '../../src/database/cancelling-client.js';
import { isFailoverError } from '../../src/database/failover-retry.js';
import { testDatabaseUrl } from '../support/test-app.js';

describe('the statement timeout (cancellingClient)', () => {
  let pool: pg.Pool;

  beforeAll(() => {
    pool = new pg.Pool({
      connectionString: testDatabaseUrl(),
      max: 2,
      Client: cancellingClient(200),
    });
  });

  afterAll(async () => {
    await pool.end();
  });

  it("cancels a statement sent through the pool's query (callback form)", async () => {
    await expect(pool.query('SELECT pg_sleep(30)')).rejects.toMatchObject({ code: '57014' });
  });

  it("cancels a statement sent through a client's promise form", async () => {
    const client = await pool.connect();
    try {
      await expect(client.query('SELECT pg_sleep(30)')).rejects.toMatchObject({ code: '57014' });
    } finally {
      client.release();
    }
  });

  it('leaves statements that finish in time alone, and the connection usable', async () => {
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    const client = await pool.connect();
    try {
      expect((await client.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    } finally {
      client.release();
    }
  });

  it('marks a failure that outlived it: a keyed create answers it rather than retrying', async () => {
    const timedOut: unknown = await pool.query('SELECT pg_sleep(30)').catch((error) => error);
    expect(outlivedStatementTimeout(timedOut)).toBe(true);
    expect(isFailoverError(timedOut)).toBe(false);

    // A connection the server closed in time is a failover error, retried.
    const client = await pool.connect();
    const terminated: unknown = await client
      .query('SELECT pg_terminate_backend(pg_backend_pid())')
      .catch((error) => error);
    client.release(true);
    expect(outlivedStatementTimeout(terminated)).toBe(false);
    expect(isFailoverError(terminated)).toBe(true);

    const failed: unknown = await pool.query('SELECT 1 / 0').catch((error) => error);
    expect(outlivedStatementTimeout(failed)).toBe(false);
    expect(isFailoverError(failed)).toBe(false);
  });
});
