// GET /users/changes: the events every write path adds, pages and tokens, the errors, and the
// Changes-Token of GET /users.
import pg from 'pg';
import { encodeChangeToken } from '../../src/changes/change-token.js';
import { ChangesPurge } from '../../src/changes/changes-purge.js';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { drainFeed, feedEvent, versions } from '../support/changes-feed.js';
import {
  createTestApp,
  resetDatabase,
  testDatabaseUrl,
  type TestApp,
} from '../support/test-app.js';

const INVALID_TOKEN = { error: 'the change token is invalid: it was altered or not issued here' };

describe('GET /users/changes (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: { CHANGES_RETENTION_HOURS: '1', CHANGES_PURGE_INTERVAL_MS: '0' },
    });
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(() => t.close());

  const feed = (after?: string) => drainFeed(() => t.http(), after);
  const sql = (text: string, parameters?: unknown[]) => t.dataSource.query(text, parameters);

  it('is its own route, not a user id, and answers an empty feed with a token', async () => {
    const res = await t.http().get('/users/changes').expect(200);
    expect(res.body).toEqual({ events: [], next: expect.stringMatching(/^[\w-]+\.[\w-]{16}$/) });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('has an event for each REST write, in order, with the changed fields only', async () => {
    const ada = (await t.http().post('/users').send({ name: 'Ada' }).expect(201)).body;
    await t.http().patch(`/users/${ada.id}`).send({ role: 'admin' }).expect(200);
    await t
      .http()
      .put(`/users/${ada.id}`)
      .send({ name: 'Ada L', email: 'ada@example.com', role: 'admin' })
      .expect(200);
    // The same value again: the row's updatedAt and version move, no field changed.
    await t.http().patch(`/users/${ada.id}`).send({ name: 'Ada L' }).expect(200);
    await t.http().delete(`/users/${ada.id}`).expect(204);
    expect((await feed()).events).toEqual([
      feedEvent('created', ada.id, 1),
      feedEvent('updated', ada.id, 2, ['role']),
      feedEvent('updated', ada.id, 3, ['name', 'email']),
      feedEvent('updated', ada.id, 4, []),
      feedEvent('deleted', ada.id, 5),
    ]);
  });

  it('has no event for an empty PATCH, a failed write or a replayed keyed create', async () => {
    const key = { 'Idempotency-Key': 'changes-1' };
    const ada = (await t.http().post('/users').set(key).send({ name: 'Ada' }).expect(201)).body;
    const replay = await t.http().post('/users').set(key).send({ name: 'Ada' }).expect(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    await t.http().patch(`/users/${ada.id}`).send({}).expect(200);
    await t.http().patch(`/users/${ada.id}`).set('If-Match', '"1.7"').send({ name: 'X' });
    const bob = await t.http().post('/users').send({ name: 'Bob', email: 'b@example.com' });
    await t.http().post('/users').send({ name: 'Eve', email: 'B@example.com' }).expect(409);
    // The replay ran its create and rolled it back: the id it took is gone, its event unseen.
    expect(versions((await feed()).events)).toEqual([
      [ada.id, 1],
      [bob.body.id, 1],
    ]);
  });

  it('has the events of SQL run on the table directly, several rows per statement too', async () => {
    await sql(`INSERT INTO users (name) VALUES ('A'), ('B'), ('C')`);
    await sql(`UPDATE users SET role = 'ops' WHERE name IN ('A', 'B')`);
    // A statement that changes nothing in a row: no version, no event.
    await sql(`UPDATE users SET role = role`);
    await sql(`DELETE FROM users WHERE name = 'A'`);
    const { events } = await feed();
    expect(events).toEqual([
      feedEvent('created', 1, 1),
      feedEvent('created', 2, 1),
      feedEvent('created', 3, 1),
      feedEvent('updated', 1, 2, ['role']),
      feedEvent('updated', 2, 2, ['role']),
      feedEvent('deleted', 1, 3),
    ]);
    expect(await sql(`SELECT id, version FROM users ORDER BY id`)).toEqual([
      { id: 2, version: 2 },
      { id: 3, version: 1 },
    ]);
  });

  it('pages: limit events each, and next continues exactly after the page', async () => {
    await sql(`INSERT INTO users (name) SELECT 'u' || g FROM generate_series(1, 25) g`);
    const seen: number[] = [];
    let after: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res = await t.http().get('/users/changes').query({ limit: 10, after }).expect(200);
      seen.push(...res.body.events.map((event: { data: { id: number } }) => event.data.id));
      after = res.body.next;
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    // An empty page's next is the token it read after: nothing is skipped once writes resume.
    await sql(`INSERT INTO users (name) VALUES ('late')`);
    const res = await t.http().get('/users/changes').query({ after }).expect(200);
    expect(versions(res.body.events)).toEqual([[26, 1]]);
  });

  it('answers 400 for a malformed, altered or made-up token, and for bad limit and wait', async () => {
    await sql(`INSERT INTO users (name) VALUES ('A')`);
    const { next } = await feed();
    const [payload, check] = next.split('.');
    const altered = `${encodeChangeToken({ position: 1n, id: 1n }).split('.')[0]}.${check}`;
    for (const after of ['garbage', `${payload}.AAAAAAAAAAAAAAAA`, altered, `${next}.x`]) {
      const res = await t.http().get('/users/changes').query({ after }).expect(400);
      expect([after, res.body]).toEqual([after, INVALID_TOKEN]);
    }
    // A well-formed token beyond every transaction that has started: no server issued it.
    const beyond = encodeChangeToken({ position: 2n ** 40n, id: 1n });
    expect(
      (await t.http().get('/users/changes').query({ after: beyond }).expect(400)).body,
    ).toEqual({
      error: 'the change token is invalid: it points past the newest change',
    });
    const list = async (query: Record<string, string>) =>
      (await t.http().get('/users/changes').query(query).expect(400)).body;
    const badLimit = { error: 'limit must be an integer between 1 and 1000' };
    const badWait = { error: 'wait must be an integer between 0 and 30' };
    expect(await list({ limit: '0' })).toEqual(badLimit);
    expect(await list({ limit: '1001' })).toEqual(badLimit);
    expect(await list({ wait: '31' })).toEqual(badWait);
    expect(await list({ wait: '-1' })).toEqual(badWait);
    expect(await list({ wait: '01' })).toEqual(badWait);
  });

  it('answers 410 for a token older than the retention, once the purge has passed it', async () => {
    await sql(`INSERT INTO users (name) VALUES ('A')`);
    const afterA = (await feed()).next;
    await sql(`INSERT INTO users (name) VALUES ('B')`);
    const afterB = (await feed()).next;
    await sql(`INSERT INTO users (name) VALUES ('C')`);
    // A and B are older than the retention (1 hour here); C is not.
    await sql(`UPDATE user_changes SET at = now() - interval '2 hours' WHERE user_id IN (1, 2)`);
    expect(await t.app.get(ChangesPurge).purgeExpired()).toBe(2);
    const gone = await t.http().get('/users/changes').query({ after: afterA }).expect(410);
    expect(gone.body).toEqual({
      error:
        'the change token has expired: changes after it were purged (kept 1 hours); list the users again and follow the feed from their Changes-Token',
    });
    // Nothing after B was purged: its token still reads on; so does a read from the start.
    expect(versions((await feed(afterB)).events)).toEqual([[3, 1]]);
    expect(versions((await feed()).events)).toEqual([[3, 1]]);
    expect(await sql(`SELECT count(*)::int AS n FROM user_changes`)).toEqual([{ n: 1 }]);
  });

  it('starts again when the users table is truncated: old tokens 410, new changes follow', async () => {
    await sql(`INSERT INTO users (name) VALUES ('A'), ('B')`);
    const before = (await feed()).next;
    // An operator's reset: the users go, their ids start again from 1.
    await sql('TRUNCATE users RESTART IDENTITY CASCADE');
    await t.http().get('/users/changes').query({ after: before }).expect(410);
    await sql(`INSERT INTO users (name) VALUES ('C')`);
    // The new user 1 is no old user 1: the feed holds only what came after the reset.
    expect(versions((await feed()).events)).toEqual([[1, 1]]);
    const list = await t.http().get('/users').expect(200);
    await sql(`UPDATE users SET name = 'C2' WHERE id = 1`);
    expect(versions((await feed(list.headers['changes-token'])).events)).toEqual([[1, 2]]);
  });

  it('delivers what the reset itself and an older transaction write after a truncate', async () => {
    const older = new pg.Client({ connectionString: testDatabaseUrl() });
    await older.connect();
    try {
      // The trigger ran in this session before the reset: what it planned then sees the reset.
      await older.query(`INSERT INTO users (name) VALUES ('A')`);
      await older.query('BEGIN');
      await older.query('SELECT pg_current_xact_id()');
      await t.dataSource.transaction(async (manager) => {
        await manager.query('TRUNCATE users RESTART IDENTITY CASCADE');
        await manager.query(`INSERT INTO users (name) VALUES ('B')`);
      });
      // A transaction id smaller than the reset's, writing after it.
      await older.query(`INSERT INTO users (name) VALUES ('C')`);
      await older.query('COMMIT');
    } finally {
      await older.end();
    }
    expect(versions((await feed()).events)).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });

  it('purges up to the first event younger than the retention, never past it', async () => {
    await sql(`INSERT INTO users (name) SELECT 'u' || g FROM generate_series(1, 3) g`);
    await sql(`UPDATE user_changes SET at = now() - interval '2 hours' WHERE user_id IN (1, 3)`);
    expect(await t.app.get(ChangesPurge).purgeExpired()).toBe(1);
    expect(versions((await feed()).events)).toEqual([
      [2, 1],
      [3, 1],
    ]);
  });

  it('purges in one place at a time: a second purger never moves the watermark past a kept event', async () => {
    // Two batches of the purge (1,000 each) in one transaction's events; the 500th is young.
    await sql(`INSERT INTO users (name) SELECT 'u' || g FROM generate_series(1, 2000) g`);
    await sql(`UPDATE user_changes SET at = now() - interval '2 hours' WHERE user_id <> 500`);
    const waiting = async () =>
      (
        await sql(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        )
      )[0].n as number;
    // Holding the watermark's row keeps the first purger in its batch's transaction.
    await sql(
      `INSERT INTO user_changes_watermark (position, id) VALUES (0, 0) ON CONFLICT DO NOTHING`,
    );
    const holder = new pg.Client({ connectionString: testDatabaseUrl() });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT * FROM user_changes_watermark FOR UPDATE');
      const purge = t.app.get(ChangesPurge);
      const first = purge.purgeExpired();
      await waitFor('the first purger to wait', async () => (await waiting()) === 1);
      let secondEnded = false;
      const second = purge.purgeExpired().finally(() => (secondEnded = true));
      await waitFor('the second purger to wait too, or to give way', async () =>
        secondEnded ? true : (await waiting()) === 2,
      );
      await holder.query('COMMIT');
      await Promise.all([first, second]);
    } finally {
      await holder.end();
    }
    // Only the events before the young one went; a read from the start finds every other.
    const { events } = await feed();
    expect(events.length).toBe(1501);
    expect(versions(events)[0]).toEqual([500, 1]);
  });

  it('gives GET /users a Changes-Token from which the feed misses nothing', async () => {
    await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    const list = await t.http().get('/users').expect(200);
    const token = list.headers['changes-token'];
    expect(token).toMatch(/^[\w-]+\.[\w-]{16}$/);
    await t.http().patch('/users/1').send({ role: 'admin' }).expect(200);
    await t.http().post('/users').send({ name: 'Bob' }).expect(201);
    // Everything after the list: the listed user's change and the new user.
    const { events } = await feed(token);
    expect(versions(events)).toEqual([
      [1, 2],
      [2, 1],
    ]);
    // Cursor mode and a filtered list carry one too.
    const cursor = await t.http().get('/users').query({ cursor: '', role: 'admin' }).expect(200);
    expect(cursor.headers['changes-token']).toMatch(/^[\w-]+\.[\w-]{16}$/);
  });

  it('gives GET /users a Changes-Token at the newest event it saw: an id handed out again after it is still read', async () => {
    await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    // Transaction ids taken after Ada's event, and ended without one: the horizon passes them.
    for (let i = 0; i < 3; i++) await sql('SELECT pg_current_xact_id()');
    const [{ reused }] = await sql(`SELECT (max(position) + 1)::text AS reused FROM user_changes`);
    const list = await t.http().get('/users').expect(200);
    // A promoted standby, or a database restored to an earlier point, hands such an id out again
    // (the old primary's transaction was never replicated); a change commits at it.
    await sql(
      `INSERT INTO user_changes (position, user_id, version, type, changed, at, xid)
       VALUES ($1, 1, 2, 'updated', '{name}', now(), $1)`,
      [reused],
    );
    expect(versions((await feed(list.headers['changes-token'])).events)).toEqual([[1, 2]]);
  });

  it('gives GET /users a Changes-Token after a reset that reads on while an older transaction runs', async () => {
    const older = new pg.Client({ connectionString: testDatabaseUrl() });
    await older.connect();
    try {
      await older.query('BEGIN');
      await older.query('SELECT pg_current_xact_id()');
      await sql('TRUNCATE users RESTART IDENTITY CASCADE');
      const token = (await t.http().get('/users').expect(200)).headers['changes-token'];
      expect((await feed(token)).events).toEqual([]);
      await older.query(`INSERT INTO users (name) VALUES ('A')`);
      await older.query('COMMIT');
      expect(versions((await feed(token)).events)).toEqual([[1, 1]]);
    } finally {
      await older.end();
    }
  });

  it('gives an empty page of GET /users a Changes-Token too, from which the feed misses nothing', async () => {
    await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    const empty = await t.http().get('/users').query({ page: 5, limit: 10 }).expect(200);
    expect(empty.body).toEqual([]);
    const token = empty.headers['changes-token'];
    expect(token).toMatch(/^[\w-]+\.[\w-]{16}$/);
    await t.http().post('/users').send({ name: 'Bob' }).expect(201);
    // Ada was created before the page was read: only Bob follows.
    expect(versions((await feed(token)).events)).toEqual([[2, 1]]);
  });
});
