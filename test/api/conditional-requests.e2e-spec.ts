import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

const ETAG = /^"\d+\.\d+"$/;

describe('conditional requests: ETag, If-None-Match, If-Match (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(() => t.close());

  const createUser = async (body: object = { name: 'Ada' }) => {
    const res = await t.http().post('/users').send(body).expect(201);
    return { id: res.body.id as number, etag: res.headers.etag };
  };
  const changed = (id: number) => ({
    error: `user ${id} has changed: If-Match matches no current ETag`,
  });

  describe('ETag', () => {
    it('is sent by GET, POST, PUT and PATCH, strong, and the same for the same representation', async () => {
      const { id, etag } = await createUser();
      expect(etag).toMatch(ETAG);
      const got = await t.http().get(`/users/${id}`).expect(200);
      expect(got.headers.etag).toBe(etag);
      const patched = await t.http().patch(`/users/${id}`).send({ role: 'staff' }).expect(200);
      expect(patched.headers.etag).toMatch(ETAG);
      expect(patched.headers.etag).not.toBe(etag);
      const put = await t.http().put(`/users/${id}`).send({ name: 'Ada' }).expect(200);
      expect(put.headers.etag).not.toBe(patched.headers.etag);
      expect((await t.http().get(`/users/${id}`)).headers.etag).toBe(put.headers.etag);
    });

    it('is kept by an empty PATCH, which changes nothing', async () => {
      const { id, etag } = await createUser();
      const res = await t.http().patch(`/users/${id}`).send({}).expect(200);
      expect(res.headers.etag).toBe(etag);
    });

    it('changes when the row is changed from outside the service, and only then', async () => {
      const { id, etag } = await createUser();
      await t.dataSource.query('UPDATE users SET name = name WHERE id = $1', [id]);
      expect((await t.http().get(`/users/${id}`)).headers.etag).toBe(etag);
      await t.dataSource.query(`UPDATE users SET name = 'Bob' WHERE id = $1`, [id]);
      expect((await t.http().get(`/users/${id}`)).headers.etag).not.toBe(etag);
    });
  });

  describe('If-None-Match', () => {
    it('answers 304 with the ETag and no body when it matches', async () => {
      const { id, etag } = await createUser();
      for (const header of [etag, `W/${etag}`, `"x", ${etag}`, '*']) {
        const res = await t.http().get(`/users/${id}`).set('If-None-Match', header).expect(304);
        expect(res.headers.etag).toBe(etag);
        expect(res.text).toBe('');
      }
    });

    it('answers 200 with the body when the user changed since', async () => {
      const { id, etag } = await createUser();
      await t.http().patch(`/users/${id}`).send({ name: 'Bob' }).expect(200);
      const res = await t.http().get(`/users/${id}`).set('If-None-Match', etag).expect(200);
      expect(res.body.name).toBe('Bob');
    });

    it('works for a post', async () => {
      const { id } = await createUser();
      const post = await t.http().post(`/users/${id}/posts`).send({ title: 'T' }).expect(201);
      expect(post.headers.etag).toMatch(ETAG);
      const path = `/users/${id}/posts/${post.body.id}`;
      expect((await t.http().get(path).expect(200)).headers.etag).toBe(post.headers.etag);
      await t.http().get(path).set('If-None-Match', post.headers.etag).expect(304);
    });
  });

  describe('If-Match', () => {
    it.each(['PUT', 'PATCH', 'DELETE'])(
      '%s: 412 and nothing changes when no ETag matches',
      async (method) => {
        const { id, etag } = await createUser();
        await t.http().patch(`/users/${id}`).send({ name: 'Bob' }).expect(200);
        const before = (await t.http().get(`/users/${id}`)).body;
        const req = t.http()[method.toLowerCase() as 'put' | 'patch' | 'delete'](`/users/${id}`);
        const res = await req.set('If-Match', etag).send({ name: 'Eve' }).expect(412);
        expect(res.body).toEqual(changed(id));
        expect((await t.http().get(`/users/${id}`).expect(200)).body).toEqual(before);
      },
    );

    it.each(['PUT', 'PATCH', 'DELETE'])(
      '%s: succeeds when one listed ETag matches, or with *',
      async (method) => {
        const { id, etag } = await createUser();
        const req = t.http()[method.toLowerCase() as 'put' | 'patch' | 'delete'](`/users/${id}`);
        await req
          .set('If-Match', `"${id}.999", ${etag}`)
          .send({ name: 'Eve' })
          .expect(method === 'DELETE' ? 204 : 200);
        const other = await createUser({ name: 'Zed' });
        const star = t
          .http()
          [method.toLowerCase() as 'put' | 'patch' | 'delete'](`/users/${other.id}`);
        await star
          .set('If-Match', '*')
          .send({ name: 'Eve' })
          .expect(method === 'DELETE' ? 204 : 200);
      },
    );

    it('refuses a weak ETag and one of another user (strong comparison)', async () => {
      const a = await createUser({ name: 'A' });
      const b = await createUser({ name: 'B' });
      await t
        .http()
        .patch(`/users/${a.id}`)
        .set('If-Match', `W/${a.etag}`)
        .send({ name: 'x' })
        .expect(412);
      await t
        .http()
        .patch(`/users/${a.id}`)
        .set('If-Match', b.etag)
        .send({ name: 'x' })
        .expect(412);
    });

    it('checks an empty PATCH too', async () => {
      const { id } = await createUser();
      await t.http().patch(`/users/${id}`).set('If-Match', `"${id}.77"`).send({}).expect(412);
    });

    it('answers 404 for a missing user, whatever If-Match says', async () => {
      for (const header of ['*', '"9.1"']) {
        expect(
          (await t.http().patch('/users/9').set('If-Match', header).send({ name: 'x' }).expect(404))
            .body,
        ).toEqual({ error: 'user 9 not found' });
        await t.http().delete('/users/9').set('If-Match', header).expect(404);
      }
    });

    it('lets exactly one of 10 concurrent PATCHes with the same If-Match succeed', async () => {
      const { id, etag } = await createUser();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          t
            .http()
            .patch(`/users/${id}`)
            .set('If-Match', etag)
            .send({ name: `writer ${i}` }),
        ),
      );
      const statuses = results.map((res) => res.status).sort();
      expect(statuses).toEqual([200, ...Array<number>(9).fill(412)]);
      const winner = results.find((res) => res.status === 200)!;
      expect((await t.http().get(`/users/${id}`)).body.name).toBe(winner.body.name);
    });
  });
});
