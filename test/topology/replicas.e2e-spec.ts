// A real streaming replica (Debian PostgreSQL: a throwaway primary and a pg_basebackup standby):
// lists and their totals come from the replica, reads by id from the primary, a lagging replica
// is skipped, a promoted one is left, a stopped one fails no request, and DATABASE_URL pointing
// at the standby (a read-only node) is refused. Skipped, saying so, without Debian's
// pg_basebackup; .ci/run has it.
import pg from 'pg';
import request from 'supertest';
import {
  postgresBinForReplicas,
  startPrimary,
  type ClusterServer,
  type Primary,
} from '../../scripts/lib/pg-cluster.mjs';
import { encodeChangeToken } from '../../src/changes/change-token.js';
import { drainFeed, versions } from '../support/changes-feed.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const describeWithReplicas = postgresBinForReplicas() ? describe : describe.skip;

if (!postgresBinForReplicas()) {
  describe('read replicas', () => {
    it('is skipped: Debian PostgreSQL (pg_basebackup) not installed', () => {
      console.log(
        'pg_basebackup not installed: replica tests skipped (apt-get install postgresql)',
      );
    });
  });
}

async function poll(what: string, check: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** db_list_reads_total{pool} of an app. */
async function listReads(t: TestApp, pool: 'replica' | 'primary'): Promise<number> {
  const text = (await request(t.metricsUrl).get('').expect(200)).text;
  const match = new RegExp(`^db_list_reads_total\\{pool="${pool}"\\} (\\d+)`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

const names = (body: { name: string }[]) => body.map((user) => user.name);

describeWithReplicas('read replicas: DATABASE_READ_URLS (e2e)', () => {
  let primary: Primary;
  let standby: ClusterServer;
  let standbySql: pg.Client;
  let t: TestApp;

  const replicaHasUser = (name: string) => async () =>
    (await standbySql.query('SELECT 1 FROM users WHERE name = $1', [name])).rowCount === 1;
  const replicaUp = (app: TestApp) => async () =>
    /^db_replica_up\{[^}]*\} 1$/m.test((await request(app.metricsUrl).get('')).text);

  beforeAll(async () => {
    primary = await startPrimary({ database: 'users_test' });
    standby = await primary.startStandby();
    standbySql = new pg.Client({ connectionString: standby.url });
    await standbySql.connect();
    t = await createTestApp({
      env: {
        DATABASE_URL: primary.url,
        DATABASE_READ_URLS: standby.url,
        DB_REPLICA_MAX_LAG_MS: '60000',
      },
    });
    await poll('the replica to be checked', replicaUp(t));
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await standbySql?.end().catch(() => {});
    await standby?.stop();
    await primary?.stop();
  });

  afterEach(async () => {
    await standbySql.query('SELECT pg_wal_replay_resume()').catch(() => {});
  });

  it('lists users and posts, with totals, from the replica; reads by id from the primary', async () => {
    const ada = (await t.http().post('/users').send({ name: 'Ada' }).expect(201)).body;
    await t.http().post(`/users/${ada.id}/posts`).send({ title: 'first' }).expect(201);
    // Ada's post commits after Ada: wait until the replica has replayed both before pausing it.
    await poll(
      'Ada and her post on the replica',
      async () =>
        (await replicaHasUser('Ada')()) &&
        (await standbySql.query(`SELECT 1 FROM posts WHERE title = 'first'`)).rowCount === 1,
    );
    await standbySql.query('SELECT pg_wal_replay_pause()');
    const replicaReads = await listReads(t, 'replica');
    const primaryReads = await listReads(t, 'primary');

    const bob = (await t.http().post('/users').send({ name: 'Bob' }).expect(201)).body;
    await t.http().post(`/users/${ada.id}/posts`).send({ title: 'second' }).expect(201);

    const users = await t.http().get('/users').expect(200);
    expect(names(users.body)).toEqual(['Ada']);
    expect(users.headers['x-total-count']).toBe('1');
    const posts = await t.http().get(`/users/${ada.id}/posts`).expect(200);
    expect(posts.body.map((post: { title: string }) => post.title)).toEqual(['first']);
    expect(posts.headers['x-total-count']).toBe('1');
    // One query per list here (a short last page gives its total without a count; the users
    // list's Changes-Token is read in its page's own statement).
    expect(await listReads(t, 'replica')).toBe(replicaReads + 2);
    expect(await listReads(t, 'primary')).toBe(primaryReads);
    // A total that needs the count comes from the replica too (and an empty page, read again
    // with its Changes-Token).
    const page = await t.http().get('/users?limit=1&page=2').expect(200);
    expect(page.body).toEqual([]);
    expect(page.headers['x-total-count']).toBe('1');
    expect(await listReads(t, 'replica')).toBe(replicaReads + 5);
    // A client reads its own write by id.
    expect((await t.http().get(`/users/${bob.id}`).expect(200)).body.name).toBe('Bob');
    await t.http().get(`/users/${bob.id}/posts`).expect(200);

    await standbySql.query('SELECT pg_wal_replay_resume()');
    await poll('Bob in the list', async () =>
      names((await t.http().get('/users').expect(200)).body).includes('Bob'),
    );
  });

  it("takes GET /users' Changes-Token on the replica it lists from, so the feed misses nothing the page lacks", async () => {
    await t.http().post('/users').send({ name: 'Cy' }).expect(201);
    await poll('Cy on the replica', replicaHasUser('Cy'));
    await standbySql.query('SELECT pg_wal_replay_pause()');
    const dan = (await t.http().post('/users').send({ name: 'Dan' }).expect(201)).body;
    const cy = (await t.http().get('/users?limit=100').expect(200)).body.find(
      (user: { name: string }) => user.name === 'Cy',
    );
    await t.http().patch(`/users/${cy.id}`).send({ role: 'admin' }).expect(200);
    // The primary's horizon now lies past Dan's create and Cy's change...
    const [{ position }] = await t.dataSource.query(
      'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS position',
    );
    const primaryToken = encodeChangeToken({ position: BigInt(position), id: 0n });
    const list = await t.http().get('/users?limit=100').expect(200);
    expect(names(list.body)).not.toContain('Dan');
    // ...while the token of a list read on the paused replica lies before both: following it
    // delivers what the page does not show. The primary's token would have lost them.
    const fromList = versions(
      (await drainFeed(() => t.http(), list.headers['changes-token'])).events,
    );
    expect(fromList).toEqual(
      expect.arrayContaining([
        [dan.id, 1],
        [cy.id, 2],
      ]),
    );
    const fromPrimary = versions((await drainFeed(() => t.http(), primaryToken)).events);
    expect(fromPrimary).not.toContainEqual([dan.id, 1]);
  });

  it('reads lists from the primary while the replica lags past DB_REPLICA_MAX_LAG_MS', async () => {
    const strict = await createTestApp({
      env: {
        DATABASE_URL: primary.url,
        DATABASE_READ_URLS: standby.url,
        DB_REPLICA_MAX_LAG_MS: '200',
        MIGRATE_ON_BOOT: 'false',
      },
    });
    try {
      await poll('the replica to be checked', replicaUp(strict));
      await standbySql.query('SELECT pg_wal_replay_pause()');
      await strict.http().post('/users').send({ name: 'Lagged' }).expect(201);
      // The background check (once a second) sees the lag; lists then read from the primary.
      await poll(
        'the list to come from the primary',
        async () => names((await strict.http().get('/users').expect(200)).body).includes('Lagged'),
        5000,
      );
      expect(await listReads(strict, 'primary')).toBeGreaterThan(0);
      expect(await replicaHasUser('Lagged')()).toBe(false);
      // Caught up again, the replica serves lists again.
      await standbySql.query('SELECT pg_wal_replay_resume()');
      const replicaReads = await listReads(strict, 'replica');
      await poll(
        'the list to come from the replica again',
        async () => {
          await strict.http().get('/users').expect(200);
          return (await listReads(strict, 'replica')) > replicaReads;
        },
        5000,
      );
    } finally {
      await strict.close();
    }
  });

  it('refuses to start when DATABASE_URL is a read-only node: no connection is used there', async () => {
    // Every new connection to the primary's URL checks transaction_read_only first: a standby (or
    // a demoted primary) could serve stale reads and fails every write. At boot that is a database
    // that cannot be reached (DB_RETRY_ATTEMPTS, then exit); later, 503s and failed readiness
    // (test/faults/read-only-primary.e2e-spec.ts).
    await expect(
      createTestApp({ env: { DATABASE_URL: standby.url, MIGRATE_ON_BOOT: 'false' } }),
    ).rejects.toMatchObject({ code: '25006' });
  });

  it('leaves a replica that was promoted: lists read from the primary, not from its copy', async () => {
    await standbySql.query('SELECT pg_promote()');
    // The promoted copy takes writes of its own: the service must not list them.
    await poll('the standby to be promoted', async () => {
      const { rows } = await standbySql.query('SELECT pg_is_in_recovery() AS standby');
      return rows[0].standby === false;
    });
    await standbySql.query(`INSERT INTO users (name) VALUES ('Only on the copy')`);
    await poll(
      'the replica to be left',
      async () => !/^db_replica_up\{[^}]*\} 1$/m.test((await request(t.metricsUrl).get('')).text),
    );
    const primaryReads = await listReads(t, 'primary');
    const listed = names((await t.http().get('/users?limit=100').expect(200)).body);
    expect(listed).not.toContain('Only on the copy');
    expect(await listReads(t, 'primary')).toBe(primaryReads + 1);
  });

  it('fails no request while the replica is down: lists read from the primary', async () => {
    await standbySql.end();
    await standby.halt();
    const failures: number[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await t.http().get(i % 2 ? '/users' : '/users?limit=1');
      if (res.status !== 200) failures.push(res.status);
    }
    expect(failures).toEqual([]);
    expect((await t.http().post('/users').send({ name: 'Still' }).expect(201)).body.name).toBe(
      'Still',
    );
    expect(names((await t.http().get('/users?limit=100').expect(200)).body)).toContain('Still');
  });
});
