// PUT, PATCH and DELETE /users/:id: replacing, changing and removing a user.
import { ISO_DATE, invalid, userNotFound } from '../support/expected-errors.js';
import { count, seed, t, users, useUsersApi } from '../support/users-api.js';

describe('Users API (e2e)', () => {
  useUsersApi();

  describe('PUT /users/:id', () => {
    it('replaces the user: absent email clears it, absent role resets it', async () => {
      const [ada] = await seed([{ name: 'Ada', email: 'ada@example.com', role: 'admin' }]);
      const res = await t.http().put(`/users/${ada.id}`).send({ name: ' Ada L ' }).expect(200);
      expect(res.body).toEqual({
        id: ada.id,
        name: 'Ada L',
        role: 'member',
        active: true,
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
});
