// The users behaviour through PgBouncer in transaction pooling with PgBouncer's default settings
// (docs/scaling-out.md, PgBouncer), and DB_STATEMENT_TIMEOUT_MS bounding a query
// there. Skipped, saying so, where PgBouncer is not installed; .ci/run installs it.
import pg from 'pg';
import { pgbouncerPath, startPgBouncer, type PgBouncer } from '../../scripts/lib/pgbouncer.mjs';
import { SERVICE_UNAVAILABLE } from '../support/expected-errors.js';
import {
  createTestApp,
  resetDatabase,
  testDatabaseUrl,
  type TestApp,
} from '../support/test-app.js';

const STATEMENT_TIMEOUT_MS = 1000;
const describeWithPgBouncer = pgbouncerPath() ? describe : describe.skip;

if (!pgbouncerPath()) {
  describe('PgBouncer (transaction pooling)', () => {
    it('is skipped: pgbouncer not installed', () => {
      console.log('pgbouncer not installed: skipped (apt-get install pgbouncer)');
    });
  });
}

describeWithPgBouncer('PgBouncer in transaction pooling, default settings (e2e)', () => {
  let bouncer: PgBouncer;
  let t: TestApp;

  beforeAll(async () => {
    bouncer = await startPgBouncer({ targetUrl: testDatabaseUrl() });
    // MIGRATE_ON_BOOT=true (createTestApp): the advisory-locked migration run goes through it too.
    t = await createTestApp({
      env: {
        DATABASE_URL: bouncer.url,
        DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        IDEMPOTENCY_WAIT_MS: String(STATEMENT_TIMEOUT_MS / 2),
      },
    });
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(async () => {
    await t?.close();
    await bouncer?.stop();
  });

  it('is ready', async () => {
    await t.http().get('/health/ready').expect(200);
  });

  it('creates, reads, lists with totals, patches with If-Match and deletes', async () => {
    const created = await t
      .http()
      .post('/users')
      .send({ name: 'Ada', email: 'ada@example.com' })
      .expect(201);
    const id = created.body.id as number;
    expect(created.body).toEqual(
      expect.objectContaining({ id, name: 'Ada', email: 'ada@example.com' }),
    );
    const got = await t.http().get(`/users/${id}`).expect(200);
    expect(got.body).toEqual(created.body);
    await t.http().post('/users').send({ name: 'Bob' }).expect(201);
    const list = await t.http().get('/users').expect(200);
    expect(list.body.map((user: { name: string }) => user.name)).toEqual(['Ada', 'Bob']);
    expect(list.headers['x-total-count']).toBe('2');

    const patched = await t
      .http()
      .patch(`/users/${id}`)
      .set('If-Match', got.headers.etag)
      .send({ name: 'Ada L.' })
      .expect(200);
    expect(patched.body.name).toBe('Ada L.');
    await t
      .http()
      .patch(`/users/${id}`)
      .set('If-Match', got.headers.etag)
      .send({ name: 'stale' })
      .expect(412);
    await t.http().delete(`/users/${id}`).expect(204);
    await t.http().get(`/users/${id}`).expect(404);
    expect((await t.http().get('/users').expect(200)).headers['x-total-count']).toBe('1');
  });

  it('replays an idempotent create with the same key', async () => {
    const send = () =>
      t.http().post('/users').set('Idempotency-Key', 'pgbouncer-key-1').send({ name: 'Once' });
    const first = await send().expect(201);
    const retry = await send().expect(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect((await t.http().get('/users').expect(200)).headers['x-total-count']).toBe('1');
  });

  it('answers 503 after about DB_STATEMENT_TIMEOUT_MS and stops the statement on the server', async () => {
    const { id } = (await t.http().post('/users').send({ name: 'Locked' }).expect(201)).body;
    const locker = new pg.Client({ connectionString: testDatabaseUrl() });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE "users" IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const res = await t.http().get(`/users/${id}`).expect(503);
      const elapsed = Date.now() - started;
      expect(res.body).toEqual(SERVICE_UNAVAILABLE);
      expect(elapsed).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 50);
      expect(elapsed).toBeLessThan(STATEMENT_TIMEOUT_MS + 1500);
      // The lock is still held, yet no statement of the service waits on it any more: the cancel
      // reached the server through PgBouncer.
      const waiting = async () =>
        (
          await locker.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE application_name = 'users-service' AND wait_event_type = 'Lock'`,
          )
        ).rows[0].n as number;
      const deadline = Date.now() + 2000;
      while ((await waiting()) > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(await waiting()).toBe(0);
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
    }
    // The pooled connection is free again.
    await t.http().get(`/users/${id}`).expect(200);
  });
});
