// GET /users/:id and GET /users: one user by id, and the list with its paging, filtering and
// sorting.
import type { User } from '../../src/users/user.entity.js';
import { INVALID_ID, userNotFound } from '../support/expected-errors.js';
import { seed, t, users, useUsersApi } from '../support/users-api.js';

describe('Users API (e2e)', () => {
  useUsersApi();

  describe('GET /users/:id', () => {
    it('returns the user', async () => {
      const [ada] = await seed([{ name: 'Ada', email: 'ada@example.com' }]);
      const res = await t.http().get(`/users/${ada.id}`).expect(200);
      expect(res.body).toEqual({
        id: ada.id,
        name: 'Ada',
        email: 'ada@example.com',
        role: 'member',
        active: true,
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

    it('filters by active, alone or with role, with exact totals', async () => {
      await seed([
        { name: 'A', active: false },
        { name: 'B' },
        { name: 'C', role: 'admin', active: false },
        { name: 'D', role: 'admin' },
      ]);
      const inactive = await t.http().get('/users?active=false').expect(200);
      expect(inactive.body.map((u: User) => [u.name, u.active])).toEqual([
        ['A', false],
        ['C', false],
      ]);
      expect(inactive.headers['x-total-count']).toBe('2');
      const activeAdmins = await t.http().get('/users?active=true&role=admin&limit=1').expect(200);
      expect(names(activeAdmins)).toEqual(['D']);
      expect(activeAdmins.headers['x-total-count']).toBe('1');
      expect(activeAdmins.headers.link).toContain('</users?active=true&role=admin&limit=1&page=1>');
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
      ['active=no', 'active must be true or false'],
      ['active=true&active=false', 'query parameter active must be given at most once'],
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
});
