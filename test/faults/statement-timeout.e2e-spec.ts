// DB_STATEMENT_TIMEOUT_MS bounds every statement the service sends, whichever way pg is called:
// the callback form (pg's Pool#query: the hot reads, creates and replica reads) and the promise
// form (TypeORM). The server stops the statement: it fails with 57014 (query_canceled).
import pg from 'pg';
import { cancellingClient } from '../../src/database/cancelling-client.js';
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
});
