import type { Repository } from 'typeorm';
import { User } from '../../src/users/user.entity.js';
import {
  INVALID_ID,
  INVALID_JSON,
  ISO_DATE,
  NOT_JSON,
  invalid,
  userNotFound,
} from '../support/expected-errors.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

// 255 characters, otherwise a valid address (local part 64, labels of at most 63).
const LONG_EMAIL = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`;

describe('Users API (e2e)', () => {
  let t: TestApp;
  let users: Repository<User>;

  beforeAll(async () => {
    t = await createTestApp();
    users = t.dataSource.getRepository(User);
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(() => t.close());

  const create = (body: object) => t.http().post('/users').send(body);
  const seed = (rows: Partial<User>[]) => users.save(rows.map((row) => users.create(row)));
  const count = () => users.count();

  describe('POST /users', () => {
    it('creates a user: 201, Location, trimmed name, email as sent, default role', async () => {
      const res = await create({ name: '  Ada Lovelace ', email: 'Ada@Example.com' }).expect(201);
      expect(res.body).toEqual({
        id: 1,
        name: 'Ada Lovelace',
        email: 'Ada@Example.com',
        role: 'member',
        createdAt: expect.stringMatching(ISO_DATE),
        updatedAt: expect.stringMatching(ISO_DATE),
      });
      expect(res.headers.location).toBe('/users/1');
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const stored = await users.findOneByOrFail({ id: 1 });
      expect(stored.name).toBe('Ada Lovelace');
    });

    it('accepts an email of 254 characters', async () => {
      await create({ name: 'A', email: LONG_EMAIL.slice(1) }).expect(201);
    });

    it('omits email when none is given or it is null, and keeps a given role', async () => {
      const a = await create({ name: 'A' }).expect(201);
      const b = await create({ name: 'B', email: null, role: 'admin_2-x' }).expect(201);
      expect(a.body).not.toHaveProperty('email');
      expect(b.body).toEqual(expect.objectContaining({ name: 'B', role: 'admin_2-x' }));
      expect(b.body).not.toHaveProperty('email');
    });

    it('counts name length in code points after trimming (100 emoji fit, 101 do not)', async () => {
      await create({ name: '😀'.repeat(100) }).expect(201);
      const res = await create({ name: ` ${'😀'.repeat(101)} ` }).expect(400);
      expect(res.body).toEqual(invalid('name must be 1 to 100 characters long'));
    });

    it.each([
      [{}, 'name must be a string'],
      [{ name: null }, 'name must be a string'],
      [{ name: 42 }, 'name must be a string'],
      [{ name: '   ' }, 'name must be 1 to 100 characters long'],
      [{ name: 'a'.repeat(101) }, 'name must be 1 to 100 characters long'],
      [{ name: 'a\u0000b' }, 'name must not contain NUL characters or unpaired surrogates'],
      [{ name: 'a\ud800b' }, 'name must not contain NUL characters or unpaired surrogates'],
      [{ name: 'A', email: 'not-an-email' }, 'email must be a valid email address'],
      [{ name: 'A', email: 42 }, 'email must be a valid email address'],
      [{ name: 'A', email: LONG_EMAIL }, 'email must be a valid email address'],
      [{ name: 'A', email: 'a\u0000@example.com' }, 'email must be a valid email address'],
      [{ name: 'A', role: 'Admin' }, 'role must be 1 to 32 characters of a-z, 0-9, _ and -'],
      [{ name: 'A', role: '' }, 'role must be 1 to 32 characters of a-z, 0-9, _ and -'],
      [{ name: 'A', role: 'a'.repeat(33) }, 'role must be 1 to 32 characters of a-z, 0-9, _ and -'],
      [{ name: 'A', role: null }, 'role must be 1 to 32 characters of a-z, 0-9, _ and -'],
      [{ name: 'A', role: 'x\u0000' }, 'role must be 1 to 32 characters of a-z, 0-9, _ and -'],
    ])('rejects %j with 400 and changes nothing', async (body, detail) => {
      const res = await create(body).expect(400);
      expect(res.body).toEqual(invalid(detail));
      expect(await count()).toBe(0);
    });

    it('rejects unknown and service-assigned fields, naming them', async () => {
      const res = await create({
        name: 'A',
        id: 7,
        createdAt: '2020-01-01T00:00:00.000Z',
        updatedAt: 'x',
        nickname: 'a',
      }).expect(400);
      expect(res.body).toEqual(
        invalid(
          'property id should not exist',
          'property createdAt should not exist',
          'property updatedAt should not exist',
          'property nickname should not exist',
        ),
      );
      expect(await count()).toBe(0);
    });

    it.each([['[{"name":"A"}]'], ['"A"'], ['42'], ['null']])(
      'rejects a body that is not a JSON object: %s',
      async (body) => {
        const res = await t
          .http()
          .post('/users')
          .set('content-type', 'application/json')
          .send(body)
          .expect(400);
        expect(res.body.error).toEqual(expect.any(String));
        expect(await count()).toBe(0);
      },
    );

    it('rejects malformed JSON with 400', async () => {
      const res = await t
        .http()
        .post('/users')
        .set('content-type', 'application/json')
        .send('{"name": "A",')
        .expect(400);
      expect(res.body).toEqual(INVALID_JSON);
    });

    it.each([
      ['text/plain'],
      ['application/x-www-form-urlencoded'],
      ['application/merge-patch+json'],
    ])('rejects a %s body with 415', async (type) => {
      const res = await t
        .http()
        .post('/users')
        .set('content-type', type)
        .send('{"name":"A"}')
        .expect(415);
      expect(res.body).toEqual(NOT_JSON);
      expect(await count()).toBe(0);
    });

    it('rejects a body over the 100 kB limit with 413', async () => {
      const res = await create({ name: 'A', padding: 'x'.repeat(102_400) }).expect(413);
      expect(res.body).toEqual({ error: 'request body is larger than the limit of 102400 bytes' });
      expect(await count()).toBe(0);
    });

    it('answers 409 for an email already used, ignoring case', async () => {
      await create({ name: 'A', email: 'ada@example.com' }).expect(201);
      const res = await create({ name: 'B', email: 'ADA@EXAMPLE.COM' }).expect(409);
      expect(res.body).toEqual({ error: 'email ADA@EXAMPLE.COM is already used by another user' });
      expect(await count()).toBe(1);
    });

    it('gives exactly one 201 for ten concurrent creates with one email', async () => {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => create({ name: `U${i}`, email: 'same@example.com' })),
      );
      const statuses = results.map((res) => res.status).sort();
      expect(statuses).toEqual([201, ...Array(9).fill(409)]);
      expect(await count()).toBe(1);
    });
  });

  describe('GET /users/:id', () => {
    it('returns the user', async () => {
      const [ada] = await seed([{ name: 'Ada', email: 'ada@example.com' }]);
      const res = await t.http().get(`/users/${ada.id}`).expect(200);
      expect(res.body).toEqual({
        id: ada.id,
        name: 'Ada',
        email: 'ada@example.com',
        role: 'member',
        createdAt: ada.createdAt.toISOString(),
        updatedAt: ada.updatedAt.toISOString(),
      });
    });

    it('decodes the id before validating it (/users/%31 is user 1)', async () => {
      await seed([{ name: 'Ada' }]);
      const res = await t.http().get('/users/%31').expect(200);
      expect(res.body.id).toBe(1);
    });

    it('answers 404 {error} for a missing user', async () => {
      const res = await t.http().get('/users/2147483647').expect(404);
      expect(res.body).toEqual(userNotFound(2147483647));
    });

    it.each(['abc', '1abc', '0', '-1', '1.5', '2147483648', '%20', '01', '1e3', '+1', '%E0%A4%A'])(
      'answers 400 for the id %s',
      async (id) => {
        const res = await t.http().get(`/users/${id}`).expect(400);
        if (id !== '%E0%A4%A') expect(res.body).toEqual(INVALID_ID);
        else expect(res.body).toEqual({ error: 'request path has invalid percent-encoding' });
      },
    );

    it.each(['put', 'patch', 'delete'] as const)('validates the id on %s too', async (method) => {
      const res = await t.http()[method]('/users/0').send({ name: 'A' }).expect(400);
      expect(res.body).toEqual(INVALID_ID);
    });
  });

  describe('GET /users', () => {
    const names = (res: { body: { name: string }[] }) => res.body.map((user) => user.name);

    it('lists users by id with X-Total-Count and Link', async () => {
      await seed([{ name: 'C' }, { name: 'A' }, { name: 'B' }]);
      const res = await t.http().get('/users').expect(200);
      expect(names(res)).toEqual(['C', 'A', 'B']);
      expect(res.headers['x-total-count']).toBe('3');
      expect(res.headers.link).toBe('</users?page=1>; rel="first", </users?page=1>; rel="last"');
    });

    it('pages with limit, keeping the other query parameters in Link', async () => {
      await seed(Array.from({ length: 7 }, (_, i) => ({ name: `U${i + 1}`, role: 'staff' })));
      await seed([{ name: 'other' }]);
      const first = await t.http().get('/users?role=staff&limit=3&x=1').expect(200);
      expect(names(first)).toEqual(['U1', 'U2', 'U3']);
      expect(first.headers['x-total-count']).toBe('7');
      expect(first.headers.link).toBe(
        '</users?role=staff&limit=3&x=1&page=1>; rel="first", ' +
          '</users?role=staff&limit=3&x=1&page=2>; rel="next", ' +
          '</users?role=staff&limit=3&x=1&page=3>; rel="last"',
      );
      const middle = await t.http().get('/users?role=staff&limit=3&page=2').expect(200);
      expect(names(middle)).toEqual(['U4', 'U5', 'U6']);
      expect(middle.headers.link).toBe(
        '</users?role=staff&limit=3&page=1>; rel="first", ' +
          '</users?role=staff&limit=3&page=1>; rel="prev", ' +
          '</users?role=staff&limit=3&page=3>; rel="next", ' +
          '</users?role=staff&limit=3&page=3>; rel="last"',
      );
      const last = await t.http().get('/users?role=staff&limit=3&page=3').expect(200);
      expect(names(last)).toEqual(['U7']);
      expect(last.headers.link).toBe(
        '</users?role=staff&limit=3&page=1>; rel="first", ' +
          '</users?role=staff&limit=3&page=2>; rel="prev", ' +
          '</users?role=staff&limit=3&page=3>; rel="last"',
      );
    });

    it('answers [] past the last page and with no rows, last is page 1', async () => {
      const empty = await t.http().get('/users?page=5').expect(200);
      expect(empty.body).toEqual([]);
      expect(empty.headers['x-total-count']).toBe('0');
      expect(empty.headers.link).toContain('</users?page=1>; rel="last"');
    });

    it('defaults to 20 per page', async () => {
      await seed(Array.from({ length: 25 }, (_, i) => ({ name: `U${i}` })));
      const res = await t.http().get('/users').expect(200);
      expect(res.body).toHaveLength(20);
    });

    it('filters by role exactly', async () => {
      await seed([{ name: 'A', role: 'admin' }, { name: 'B' }, { name: 'C', role: 'admins' }]);
      const res = await t.http().get('/users?role=admin').expect(200);
      expect(names(res)).toEqual(['A']);
      expect(res.headers['x-total-count']).toBe('1');
    });

    it('sorts by several fields, descending with -, ties broken by id', async () => {
      await seed([
        { name: 'B', role: 'x' },
        { name: 'A', role: 'y' },
        { name: 'B', role: 'y' },
        { name: 'A', role: 'x' },
      ]);
      const byName = await t.http().get('/users?sort=-name').expect(200);
      expect(byName.body.map((u: User) => u.id)).toEqual([1, 3, 2, 4]);
      const byRoleThenName = await t.http().get('/users?sort=role,-name').expect(200);
      expect(byRoleThenName.body.map((u: User) => u.id)).toEqual([1, 4, 3, 2]);
    });

    it('sorts by createdAt descending', async () => {
      const [a, b] = await seed([{ name: 'old' }, { name: 'new' }]);
      await users.update({ id: a.id }, { createdAt: new Date('2020-01-01T00:00:00Z') });
      await users.update({ id: b.id }, { createdAt: new Date('2024-01-01T00:00:00Z') });
      const res = await t.http().get('/users?sort=-createdAt').expect(200);
      expect(names(res)).toEqual(['new', 'old']);
    });

    it('puts users without email last ascending and first descending', async () => {
      await seed([
        { name: 'none' },
        { name: 'b', email: 'b@x.io' },
        { name: 'a', email: 'a@x.io' },
      ]);
      expect(names(await t.http().get('/users?sort=email'))).toEqual(['a', 'b', 'none']);
      expect(names(await t.http().get('/users?sort=-email'))).toEqual(['none', 'b', 'a']);
    });

    it.each([
      ['sort=nope', 'sort field nope is not one of id, name, email, role, createdAt, updatedAt'],
      [
        'sort=password',
        'sort field password is not one of id, name, email, role, createdAt, updatedAt',
      ],
      ['sort=', 'sort must not contain an empty field'],
      ['sort=name,', 'sort must not contain an empty field'],
      ['sort=-', 'sort must not contain an empty field'],
      ['sort=name,-name', 'sort field name is named twice'],
      ['limit=0', 'limit must be an integer between 1 and 100'],
      ['limit=101', 'limit must be an integer between 1 and 100'],
      ['limit=abc', 'limit must be an integer between 1 and 100'],
      ['limit=01', 'limit must be an integer between 1 and 100'],
      ['limit=%2B5', 'limit must be an integer between 1 and 100'],
      ['limit=1.0', 'limit must be an integer between 1 and 100'],
      ['limit=', 'limit must be an integer between 1 and 100'],
      ['page=0', 'page must be an integer between 1 and 1000000'],
      ['page=-1', 'page must be an integer between 1 and 1000000'],
      ['page=1000001', 'page must be an integer between 1 and 1000000'],
      ['page=99999999999999999999', 'page must be an integer between 1 and 1000000'],
      ['page=1&page=2', 'query parameter page must be given at most once'],
      ['sort=id&sort=name', 'query parameter sort must be given at most once'],
      ['role=Admin', 'role must be 1 to 32 characters of a-z, 0-9, _ and -'],
    ])('answers 400 for ?%s', async (query, error) => {
      const res = await t.http().get(`/users?${query}`).expect(400);
      expect(res.body).toEqual({ error });
    });

    it('accepts the limits of page and limit and ignores unknown parameters', async () => {
      await seed([{ name: 'A' }]);
      await t.http().get('/users?limit=100&page=1000000&whatever=1&whatever=2').expect(200, []);
      const res = await t.http().get('/users?limit=1&unknown=x').expect(200);
      expect(names(res)).toEqual(['A']);
    });
  });

  describe('PUT /users/:id', () => {
    it('replaces the user: absent email clears it, absent role resets it', async () => {
      const [ada] = await seed([{ name: 'Ada', email: 'ada@example.com', role: 'admin' }]);
      const res = await t.http().put(`/users/${ada.id}`).send({ name: ' Ada L ' }).expect(200);
      expect(res.body).toEqual({
        id: ada.id,
        name: 'Ada L',
        role: 'member',
        createdAt: ada.createdAt.toISOString(),
        updatedAt: expect.stringMatching(ISO_DATE),
      });
      expect(new Date(res.body.updatedAt).getTime()).toBeGreaterThan(ada.updatedAt.getTime());
      const stored = await users.findOneByOrFail({ id: ada.id });
      expect(stored).toEqual(
        expect.objectContaining({ name: 'Ada L', email: null, role: 'member' }),
      );
    });

    it('requires name and rejects unknown fields', async () => {
      const [ada] = await seed([{ name: 'Ada' }]);
      expect(
        (await t.http().put(`/users/${ada.id}`).send({ email: 'a@b.co' }).expect(400)).body,
      ).toEqual(invalid('name must be a string'));
      expect(
        (await t.http().put(`/users/${ada.id}`).send({ name: 'X', id: 2 }).expect(400)).body,
      ).toEqual(invalid('property id should not exist'));
      expect((await users.findOneByOrFail({ id: ada.id })).name).toBe('Ada');
    });

    it('answers 404 for a missing user and never creates one', async () => {
      const res = await t.http().put('/users/99').send({ name: 'X' }).expect(404);
      expect(res.body).toEqual(userNotFound(99));
      expect(await count()).toBe(0);
    });

    it('answers 409 for an email another user has, and allows keeping its own', async () => {
      const [a, b] = await seed([
        { name: 'A', email: 'a@example.com' },
        { name: 'B', email: 'b@example.com' },
      ]);
      await t.http().put(`/users/${b.id}`).send({ name: 'B', email: 'A@example.com' }).expect(409);
      await t.http().put(`/users/${a.id}`).send({ name: 'A2', email: 'A@EXAMPLE.com' }).expect(200);
      expect((await users.findOneByOrFail({ id: b.id })).email).toBe('b@example.com');
    });
  });

  describe('PATCH /users/:id', () => {
    it('changes only the sent fields', async () => {
      const [ada] = await seed([{ name: 'Ada', email: 'ada@example.com', role: 'admin' }]);
      const res = await t.http().patch(`/users/${ada.id}`).send({ role: 'staff' }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          id: ada.id,
          name: 'Ada',
          email: 'ada@example.com',
          role: 'staff',
        }),
      );
    });

    it('clears the email with "email": null, as merge-patch+json too', async () => {
      const [ada] = await seed([{ name: 'Ada', email: 'ada@example.com' }]);
      const res = await t
        .http()
        .patch(`/users/${ada.id}`)
        .set('content-type', 'application/merge-patch+json')
        .send(JSON.stringify({ email: null }))
        .expect(200);
      expect(res.body).not.toHaveProperty('email');
      expect((await users.findOneByOrFail({ id: ada.id })).email).toBeNull();
    });

    it('changes nothing, updatedAt included, for an empty object', async () => {
      const [ada] = await seed([{ name: 'Ada' }]);
      const res = await t.http().patch(`/users/${ada.id}`).send({}).expect(200);
      expect(res.body.updatedAt).toBe(ada.updatedAt.toISOString());
      expect((await users.findOneByOrFail({ id: ada.id })).updatedAt).toEqual(ada.updatedAt);
    });

    it('rejects null for name and role, and unknown fields', async () => {
      const [ada] = await seed([{ name: 'Ada' }]);
      expect(
        (await t.http().patch(`/users/${ada.id}`).send({ name: null }).expect(400)).body,
      ).toEqual(invalid('name must be a string'));
      expect(
        (await t.http().patch(`/users/${ada.id}`).send({ role: null }).expect(400)).body,
      ).toEqual(invalid('role must be 1 to 32 characters of a-z, 0-9, _ and -'));
      expect(
        (await t.http().patch(`/users/${ada.id}`).send({ updatedAt: 'x' }).expect(400)).body,
      ).toEqual(invalid('property updatedAt should not exist'));
      expect(await users.findOneByOrFail({ id: ada.id })).toEqual(ada);
    });

    it('answers 404 for a missing user and 409 for a taken email', async () => {
      const [, b] = await seed([{ name: 'A', email: 'a@example.com' }, { name: 'B' }]);
      expect((await t.http().patch('/users/42').send({ name: 'X' }).expect(404)).body).toEqual(
        userNotFound(42),
      );
      await t.http().patch(`/users/${b.id}`).send({ email: 'a@EXAMPLE.com' }).expect(409);
      expect((await users.findOneByOrFail({ id: b.id })).email).toBeNull();
    });
  });

  describe('DELETE /users/:id', () => {
    it('answers 204 without a body, then 404', async () => {
      const [ada] = await seed([{ name: 'Ada' }]);
      const res = await t.http().delete(`/users/${ada.id}`).expect(204);
      expect(res.text).toBe('');
      expect(await count()).toBe(0);
      expect((await t.http().delete(`/users/${ada.id}`).expect(404)).body).toEqual(
        userNotFound(ada.id),
      );
      await t.http().get(`/users/${ada.id}`).expect(404);
    });
  });

  describe('any route', () => {
    it('answers an unknown route and an unsupported method with a JSON 404', async () => {
      const unknown = await t.http().get('/nope?secret=1').expect(404);
      expect(unknown.body).toEqual({ error: 'no route for GET /nope' });
      expect(unknown.headers['content-type']).toBe('application/json; charset=utf-8');
      const method = await t.http().delete('/users').expect(404);
      expect(method.body).toEqual({ error: 'no route for DELETE /users' });
    });

    it('echoes a well-formed x-request-id and replaces any other with a UUID', async () => {
      const kept = await t.http().get('/users/1').set('x-request-id', 'req-42.a:b_c').expect(404);
      expect(kept.headers['x-request-id']).toBe('req-42.a:b_c');
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
      for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
        const res = await t.http().get('/users').set('x-request-id', bad).expect(200);
        expect(res.headers['x-request-id']).toMatch(uuid);
      }
      const parseError = await t
        .http()
        .post('/users')
        .set('content-type', 'application/json')
        .send('{')
        .expect(400);
      expect(parseError.headers['x-request-id']).toMatch(uuid);
    });
  });
});
