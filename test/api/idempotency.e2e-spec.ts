import { IdempotencyKeyPurge } from '../../src/idempotency/idempotency-key-purge.js';
import { KEY_IN_PROGRESS } from '../support/expected-errors.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

const reused = (key: string) => ({
  error: `Idempotency-Key ${key} was used for a different request`,
});

describe('idempotent creates: Idempotency-Key (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(() => t.close());

  const post = (path: string, key: string | undefined, body: unknown) => {
    const req = t.http().post(path).set('content-type', 'application/json');
    if (key !== undefined) req.set('Idempotency-Key', key);
    return req.send(JSON.stringify(body));
  };
  const userCount = async () =>
    (await t.dataSource.query<{ n: number }[]>('SELECT count(*)::int AS n FROM users'))[0].n;

  it('runs the first request, and replays it for a retry with the same key, path and body', async () => {
    const first = await post('/users', 'k-1', { name: 'Ada', role: 'admin' }).expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The same JSON value, written differently.
    const retry = await t
      .http()
      .post('/users')
      .set('content-type', 'application/json')
      .set('Idempotency-Key', 'k-1')
      .send('{ "role": "admin",\n  "name": "Ada" }')
      .expect(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.headers.etag).toBe(first.headers.etag);
    expect(await userCount()).toBe(1);
  });

  it('replays exactly what it stored for a key and a body full of quotes and backslashes', async () => {
    const key = `k'\\";--${"'".repeat(3)}`;
    const name = `O'Brien \\ "the" \\\\ '' ; -- é 😀`;
    const first = await post('/users', key, { name }).expect(201);
    expect(first.body.name).toBe(name);
    const retry = await post('/users', key, { name }).expect(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.etag).toBe(first.headers.etag);
    const stored = await t.dataSource.query<{ key: string }[]>('SELECT key FROM idempotency_keys');
    expect(stored).toEqual([{ key }]);
  });

  it('replays a post create, and keys are independent of each other', async () => {
    const { body: user } = await post('/users', undefined, { name: 'Ada' }).expect(201);
    const a = await post(`/users/${user.id}/posts`, 'p-1', { title: 'T' }).expect(201);
    const b = await post(`/users/${user.id}/posts`, 'p-2', { title: 'T' }).expect(201);
    expect(b.body.id).not.toBe(a.body.id);
    const again = await post(`/users/%3${String(user.id).slice(-1)}/posts`, 'p-1', {
      title: 'T',
    });
    if (user.id < 10) {
      // /users/%31/posts is /users/1/posts: the same request.
      expect(again.status).toBe(201);
      expect(again.body).toEqual(a.body);
      expect(again.headers.location).toBe(`/users/${user.id}/posts/${a.body.id}`);
    }
  });

  it('answers 422 for the same key with another body or path, and changes nothing', async () => {
    await post('/users', 'k-2', { name: 'Ada' }).expect(201);
    expect((await post('/users', 'k-2', { name: 'Bob' }).expect(422)).body).toEqual(reused('k-2'));
    // The key decides first: a body that validation would refuse is still another request.
    expect((await post('/users', 'k-2', { name: '' }).expect(422)).body).toEqual(reused('k-2'));
    expect((await post('/users/1/posts', 'k-2', { title: 'Ada' }).expect(422)).body).toEqual(
      reused('k-2'),
    );
    expect(await userCount()).toBe(1);
  });

  it('stores and replays a 409 the database decided', async () => {
    await post('/users', undefined, { name: 'Ada', email: 'ada@x.io' }).expect(201);
    const first = await post('/users', 'k-3', { name: 'Eve', email: 'ADA@x.io' }).expect(409);
    await t.dataSource.query('DELETE FROM users');
    const retry = await post('/users', 'k-3', { name: 'Eve', email: 'ADA@x.io' }).expect(409);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await userCount()).toBe(0);
  });

  it('stores and replays a 404 for a post to a missing user', async () => {
    const first = await post('/users/77/posts', 'k-4', { title: 'T' }).expect(404);
    expect(first.body).toEqual({ error: 'user 77 not found' });
    await t.dataSource.query(
      `INSERT INTO users (id, name) OVERRIDING SYSTEM VALUE VALUES (77, 'x')`,
    );
    expect((await post('/users/77/posts', 'k-4', { title: 'T' }).expect(404)).body).toEqual(
      first.body,
    );
  });

  it('stores nothing for a request refused by validation: a corrected retry runs', async () => {
    await post('/users', 'k-5', { name: '' }).expect(400);
    await post('/users', 'k-5', { name: 'Ada' }).expect(201);
    expect(await userCount()).toBe(1);
  });

  it('stores nothing for a request that failed with 5xx: the retry runs again', async () => {
    await t.dataSource.query(`
      BEGIN;
      CREATE FUNCTION fail_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'boom' USING ERRCODE = 'XX000'; END $$;
      CREATE TRIGGER fail_insert BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION fail_insert();
      COMMIT`);
    try {
      await post('/users', 'k-6', { name: 'Ada' }).expect(500);
    } finally {
      await t.dataSource.query(
        'BEGIN; DROP TRIGGER fail_insert ON users; DROP FUNCTION fail_insert(); COMMIT',
      );
    }
    const retry = await post('/users', 'k-6', { name: 'Ada' }).expect(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await userCount()).toBe(1);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'a b'],
    ['non-ASCII', 'clé'],
  ])('answers 400 for a key that is %s, creating nothing', async (_what, key) => {
    const res = await t
      .http()
      .post('/users')
      .set('Idempotency-Key', Buffer.from(key, 'utf8').toString('latin1'))
      .send({ name: 'Ada' })
      .expect(400);
    expect(res.body).toEqual({
      error: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
    });
    expect(await userCount()).toBe(0);
  });

  it.each([
    ['', { name: 'Ada' }],
    // The others' inserts wait for the first's email, fail on it, then meet its stored key.
    [' and an email', { name: 'Ada', email: 'ada@x.io' }],
  ])('creates exactly one user for 10 concurrent requests with one key%s', async (_what, body) => {
    const results = await Promise.all(
      Array.from({ length: 10 }, () => post('/users', 'k-7', body)),
    );
    expect(await userCount()).toBe(1);
    const created = results.filter((res) => res.status === 201);
    const original = created.filter((res) => res.headers['idempotent-replayed'] === undefined);
    expect(original).toHaveLength(1);
    for (const res of results) {
      if (res.status === 201) expect(res.body).toEqual(original[0].body);
      else expect([res.status, res.body]).toEqual([409, KEY_IN_PROGRESS]);
    }
  });

  describe('purge', () => {
    it('removes only keys past the TTL (24 h), and replicas can purge at once', async () => {
      await post('/users', 'fresh', { name: 'Ada' }).expect(201);
      await t.dataSource.query(`
        INSERT INTO idempotency_keys (key, fingerprint, status, created_at)
        SELECT 'old-' || i, repeat('0', 64), 201, now() - interval '25 hours'
        FROM generate_series(1, 2500) i`);
      await t.dataSource.query(`
        INSERT INTO idempotency_keys (key, fingerprint, status, created_at)
        VALUES ('almost', repeat('0', 64), 201, now() - interval '23 hours')`);
      const service = t.app.get(IdempotencyKeyPurge);
      const deleted = await Promise.all([service.purgeExpired(), service.purgeExpired()]);
      expect(deleted[0] + deleted[1]).toBe(2500);
      const left = await t.dataSource.query<{ key: string }[]>(
        'SELECT key FROM idempotency_keys ORDER BY key',
      );
      expect(left.map((row) => row.key)).toEqual(['almost', 'fresh']);
    });
  });
});
