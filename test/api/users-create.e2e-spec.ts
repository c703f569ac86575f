// POST /users: what a create accepts, stores and answers, and every way it is refused.
import { INVALID_JSON, ISO_DATE, NOT_JSON, invalid } from '../support/expected-errors.js';
import { count, create, t, users, useUsersApi } from '../support/users-api.js';

// 255 characters, otherwise a valid address (local part 64, labels of at most 63).
const LONG_EMAIL = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`;

describe('Users API (e2e)', () => {
  useUsersApi();

  describe('POST /users', () => {
    it('creates a user: 201, Location, trimmed name, email as sent, default role', async () => {
      const res = await create({ name: '  Ada Lovelace ', email: 'Ada@Example.com' }).expect(201);
      expect(res.body).toEqual({
        id: 1,
        name: 'Ada Lovelace',
        email: 'Ada@Example.com',
        role: 'member',
        active: true,
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
});
