// When the change feed delivers: transactions committing out of xid order, a long transaction
// in another database of the cluster, long polls (woken by a write, ended by their wait, by the
// client leaving and by shutdown), one poll query for all waiters, and the feed's metrics.
import http from 'node:http';
import pg from 'pg';
import request from 'supertest';
import { ChangesPoller } from '../../src/changes/changes-poller.js';
import { ChangesRepository } from '../../src/changes/changes.repository.js';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { drainFeed, versions } from '../support/changes-feed.js';
import {
  createTestApp,
  resetDatabase,
  scratchDatabase,
  testDatabaseUrl,
  type TestApp,
} from '../support/test-app.js';

/** A long poll after `next`, once it waits in the app's poller; `answer` is its response. */
async function waitingLongPoll(t: TestApp, next: string, wait: number) {
  const answer = t
    .http()
    .get('/users/changes')
    .query({ after: next, wait })
    .then((r) => r);
  await waitFor('the long poll to wait', () =>
    Promise.resolve(t.app.get(ChangesPoller).waiting === 1),
  );
  return { answer };
}

describe('change feed delivery (e2e)', () => {
  let t: TestApp;
  const clients: pg.Client[] = [];

  const connect = async (url = testDatabaseUrl()) => {
    const client = new pg.Client({ connectionString: url });
    // Dropping the other database ends its session: not an error of the test.
    client.on('error', () => {});
    await client.connect();
    clients.push(client);
    return client;
  };
  const xid = async (client: pg.Client) =>
    BigInt((await client.query('SELECT pg_current_xact_id()::text AS x')).rows[0].x);
  const feed = (after?: string) => drainFeed(() => t.http(), after);
  const metric = async (name: string) => {
    const { text } = await request(t.metricsUrl).get('').expect(200);
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { CHANGES_POLL_INTERVAL_MS: '50' } });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => {});
    await resetDatabase(t.dataSource);
  });
  afterAll(() => t.close());

  it.each([
    ['commits first, without a lock wait', false],
    ['waited for it on the row lock', true],
  ])(
    'delivers one user in version order when the smaller xid writes second (the other %s)',
    async (_, lockWait) => {
      await t.dataSource.query(`INSERT INTO users (name) VALUES ('v1')`);
      const first = await connect();
      const second = await connect();
      await second.query('BEGIN');
      const secondXid = await xid(second);
      await first.query('BEGIN');
      const firstXid = await xid(first);
      expect(secondXid).toBeLessThan(firstXid);
      await first.query(`UPDATE users SET name = 'v2' WHERE id = 1`);
      let secondUpdate: Promise<unknown>;
      if (lockWait) {
        secondUpdate = second.query(`UPDATE users SET name = 'v3' WHERE id = 1`);
        await waitFor('the second writer to wait on the row lock', async () => {
          // In a transaction pg_stat_activity is read once and kept: look afresh each time.
          await first.query('SELECT pg_stat_clear_snapshot()');
          const { rows } = await first.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'`,
          );
          return rows[0].n === 1;
        });
        await first.query('COMMIT');
      } else {
        await first.query('COMMIT');
        secondUpdate = second.query(`UPDATE users SET name = 'v3' WHERE id = 1`);
      }
      await secondUpdate;
      // v2 committed, but lies above the second writer's xid, the horizon: it waits.
      const before = await feed();
      expect(versions(before.events)).toEqual([[1, 1]]);
      await second.query('COMMIT');
      expect(versions((await feed(before.next)).events)).toEqual([
        [1, 2],
        [1, 3],
      ]);
      // Ordered by their own xids, the two would have come the other way round.
      const rows = await t.dataSource.query(
        `SELECT version, position::text, xid::text FROM user_changes WHERE version > 1 ORDER BY version`,
      );
      expect(rows).toEqual([
        { version: 2, position: String(firstXid), xid: String(firstXid) },
        { version: 3, position: String(firstXid), xid: String(secondXid) },
      ]);
    },
  );

  it('waits for a long transaction in another database of the cluster, and loses nothing', async () => {
    const other = await scratchDatabase('changes_other_test');
    try {
      const long = await connect(other.url);
      await long.query('BEGIN');
      await xid(long);
      const { next } = await feed();
      await t.http().post('/users').send({ name: 'Ada' }).expect(201);
      await t.http().patch('/users/1').send({ role: 'admin' }).expect(200);
      // Committed here, held back by the other database's transaction: not yet, not skipped.
      const held = await t.http().get('/users/changes').query({ after: next, wait: 1 }).expect(200);
      expect(held.body.events).toEqual([]);
      expect(held.body.next).toBe(next);
      expect(await metric('user_changes_blocking_transaction_age_seconds')).toBeGreaterThan(0.5);
      await long.query('COMMIT');
      expect(versions((await feed(next)).events)).toEqual([
        [1, 1],
        [1, 2],
      ]);
      expect(await metric('user_changes_blocking_transaction_age_seconds')).toBe(0);
    } finally {
      await other.drop();
    }
  });

  it('wakes a long poll on a write, and answers an empty page after its wait', async () => {
    const { next } = await feed();
    const started = Date.now();
    const empty = await t.http().get('/users/changes').query({ after: next, wait: 1 }).expect(200);
    expect(empty.body).toEqual({ events: [], next });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);

    const { answer: poll } = await waitingLongPoll(t, next, 20);
    const written = Date.now();
    await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    const woken = await poll;
    expect(woken.status).toBe(200);
    expect(versions(woken.body.events)).toEqual([[1, 1]]);
    expect(Date.now() - written).toBeLessThan(5000);
  });

  it('stops waiting when the client goes away', async () => {
    const { next } = await feed();
    const url = new URL(`/users/changes?wait=30&after=${next}`, t.url);
    const gone = http.get(url);
    gone.on('error', () => {});
    await waitFor('the long poll to wait', () =>
      Promise.resolve(t.app.get(ChangesPoller).waiting === 1),
    );
    gone.destroy();
    await waitFor(
      'the waiter to go',
      () => Promise.resolve(t.app.get(ChangesPoller).waiting === 0),
      5000,
    );
  });

  it('asks the database once per poll interval however many long polls wait', async () => {
    const { next } = await feed();
    const repository = t.app.get(ChangesRepository);
    let queries = 0;
    const newestVisible = repository.newestVisible.bind(repository);
    repository.newestVisible = () => {
      queries++;
      return newestVisible();
    };
    try {
      const polls = Array.from({ length: 20 }, () =>
        t.http().get('/users/changes').query({ after: next, wait: 1 }).expect(200),
      );
      await Promise.all(polls);
      // 1 s at one query per 50 ms for all 20, not 20 per interval.
      expect(queries).toBeGreaterThan(0);
      expect(queries).toBeLessThanOrEqual(25);
    } finally {
      repository.newestVisible = newestVisible;
    }
  });

  it('counts the events written and how old the newest visible one is', async () => {
    const before = (await metric('user_changes_events_total')) ?? 0;
    await t.dataSource.query(
      `INSERT INTO users (name) SELECT 'u' || g FROM generate_series(1, 3) g`,
    );
    expect(await metric('user_changes_events_total')).toBe(before + 3);
    const age = await metric('user_changes_visible_age_seconds');
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(60);
  });
});

describe('long polls at shutdown (e2e)', () => {
  it('answers waiting long polls at the end of the drain, before the server closes', async () => {
    const t = await createTestApp({ env: { SHUTDOWN_DRAIN_MS: '300' } });
    let closed: Promise<void> | undefined;
    try {
      const { next } = await drainFeed(() => t.http());
      const started = Date.now();
      const { answer: poll } = await waitingLongPoll(t, next, 30);
      closed = t.close();
      const answer = await poll;
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ events: [], next });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await (closed ?? t.close());
    }
  });
});
