import pg from 'pg';
import { KEY_IN_PROGRESS } from '../support/expected-errors.js';
import { waitFor } from '../support/service-process.js';
import {
  createTestApp,
  resetDatabase,
  testDatabaseUrl,
  type TestApp,
} from '../support/test-app.js';

// IDEMPOTENCY_WAIT_MS bounds the wait for a concurrent request that holds the same key, and
// nothing else: a keyed create that queues behind another lock (here another transaction's
// uncommitted row with the same email) waits like an unkeyed one, instead of failing with
// "still in progress" after the key's bound.
describe('idempotent creates: the key wait bounds only the key (e2e)', () => {
  const WAIT_MS = 200;
  let t: TestApp;
  let blocker: pg.Client;

  beforeAll(async () => {
    t = await createTestApp({ env: { IDEMPOTENCY_WAIT_MS: String(WAIT_MS) } });
    blocker = new pg.Client({ connectionString: testDatabaseUrl() });
    await blocker.connect();
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(async () => {
    await blocker.end();
    await t.close();
  });

  /** Service backends this test's blocker holds up for longer than the key's bound, twice over
   * (the clock, not now(): this connection's transaction fixed now() at its BEGIN). Inside a
   * transaction pg_stat_activity is read once and kept until its end, so each look clears that
   * snapshot first: without it, a first look before the create's wait began saw no wait ever. */
  const waitingPastTheBound = async () => {
    await blocker.query('SELECT pg_stat_clear_snapshot()');
    return (
      await blocker.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE application_name = 'users-service'
           AND pg_backend_pid() = ANY (pg_blocking_pids(pid))
           AND clock_timestamp() - query_start > make_interval(secs => $1)`,
        [(2 * WAIT_MS) / 1000],
      )
    ).rows[0].n;
  };

  it('waits past IDEMPOTENCY_WAIT_MS for a row lock another transaction holds, then creates', async () => {
    await blocker.query('BEGIN');
    await blocker.query(`INSERT INTO users (name, email) VALUES ('Other', 'ada@example.com')`);
    const create = t
      .http()
      .post('/users')
      .set('Idempotency-Key', 'queued-1')
      .send({ name: 'Ada', email: 'ada@example.com' });
    const answer = create.then((response) => response);
    // An answer before the wait is itself the failure, with what was answered.
    const answeredFirst = answer.then((early) => {
      throw new Error(`answered ${early.status} ${JSON.stringify(early.body)} before waiting`);
    });
    try {
      await Promise.race([
        waitFor(
          'the keyed create to wait on the email past the key bound',
          async () => (await waitingPastTheBound()) === 1,
        ),
        answeredFirst,
      ]);
    } finally {
      await blocker.query('ROLLBACK');
    }
    const response = await answer;
    expect(response.status).toBe(201);
    expect(response.body).toEqual(
      expect.objectContaining({ name: 'Ada', email: 'ada@example.com' }),
    );
  });

  it('answers 409 after IDEMPOTENCY_WAIT_MS while another transaction holds the key, creating nothing', async () => {
    const users = async () =>
      (await blocker.query<{ n: number }>('SELECT count(*)::int AS n FROM users')).rows[0].n;
    const create = () =>
      t.http().post('/users').set('Idempotency-Key', 'held-1').send({ name: 'Ada' });
    await blocker.query('BEGIN');
    await blocker.query(
      `INSERT INTO idempotency_keys (key, fingerprint) VALUES ('held-1', repeat('0', 64))`,
    );
    try {
      const response = await create();
      expect([response.status, response.body]).toEqual([409, KEY_IN_PROGRESS]);
      expect(await users()).toBe(0);
    } finally {
      await blocker.query('ROLLBACK');
    }
    // The key is free again: the retry creates.
    expect((await create()).status).toBe(201);
    expect(await users()).toBe(1);
  });
});
