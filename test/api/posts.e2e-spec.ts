import type { Repository } from 'typeorm';
import { Post } from '../../src/posts/post.entity.js';
import { User } from '../../src/users/user.entity.js';
import { INVALID_ID, ISO_DATE, invalid, userNotFound } from '../support/expected-errors.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

describe('Posts API (e2e)', () => {
  let t: TestApp;
  let users: Repository<User>;
  let posts: Repository<Post>;
  let ada: User;
  let bob: User;

  beforeAll(async () => {
    t = await createTestApp();
    users = t.dataSource.getRepository(User);
    posts = t.dataSource.getRepository(Post);
  });
  beforeEach(async () => {
    [ada, bob] = await users.save([users.create({ name: 'Ada' }), users.create({ name: 'Bob' })]);
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(() => t.close());

  const seedPosts = (userId: number, titles: string[]) =>
    posts.save(titles.map((title) => posts.create({ userId, title })));

  describe('POST /users/:id/posts', () => {
    it('creates a post: 201, Location, trimmed title, default body', async () => {
      const res = await t
        .http()
        .post(`/users/${ada.id}/posts`)
        .send({ title: '  Hello ' })
        .expect(201);
      expect(res.body).toEqual({
        id: 1,
        userId: ada.id,
        title: 'Hello',
        body: '',
        createdAt: expect.stringMatching(ISO_DATE),
        updatedAt: expect.stringMatching(ISO_DATE),
      });
      expect(res.headers.location).toBe(`/users/${ada.id}/posts/1`);
      expect(await posts.countBy({ userId: ada.id })).toBe(1);
    });

    it('keeps a body of 10,000 characters', async () => {
      const body = 'é'.repeat(10_000);
      const res = await t
        .http()
        .post(`/users/${ada.id}/posts`)
        .send({ title: 'T', body })
        .expect(201);
      expect(res.body.body).toBe(body);
    });

    it.each([
      [{}, 'title must be a string'],
      [{ title: ' ' }, 'title must be 1 to 200 characters long'],
      [{ title: 'x'.repeat(201) }, 'title must be 1 to 200 characters long'],
      [{ title: 'T', body: 'x'.repeat(10_001) }, 'body must be at most 10000 characters long'],
      [{ title: 'T', body: null }, 'body must be a string'],
      [{ title: 'T', body: 5 }, 'body must be a string'],
      [{ title: 'T\u0000' }, 'title must not contain NUL characters or unpaired surrogates'],
      [
        { title: 'T', body: 'a\udc00' },
        'body must not contain NUL characters or unpaired surrogates',
      ],
      [{ title: 'T', userId: 2 }, 'property userId should not exist'],
      [{ title: 'T', id: 2 }, 'property id should not exist'],
    ])('rejects %j with 400 and changes nothing', async (body, detail) => {
      const res = await t.http().post(`/users/${ada.id}/posts`).send(body).expect(400);
      expect(res.body).toEqual(invalid(detail));
      expect(await posts.count()).toBe(0);
    });

    it('answers 404 for a missing user', async () => {
      const res = await t.http().post('/users/999/posts').send({ title: 'T' }).expect(404);
      expect(res.body).toEqual(userNotFound(999));
      expect(await posts.count()).toBe(0);
    });

    it('answers 400 for a bad user id', async () => {
      expect((await t.http().post('/users/x/posts').send({ title: 'T' }).expect(400)).body).toEqual(
        INVALID_ID,
      );
    });
  });

  describe('GET /users/:id/posts', () => {
    it('lists only that user’s posts, with X-Total-Count and Link', async () => {
      await seedPosts(ada.id, ['a1', 'a2', 'a3']);
      await seedPosts(bob.id, ['b1']);
      const res = await t.http().get(`/users/${ada.id}/posts?limit=2`).expect(200);
      expect(res.body.map((post: Post) => post.title)).toEqual(['a1', 'a2']);
      expect(res.body.every((post: Post) => post.userId === ada.id)).toBe(true);
      expect(res.headers['x-total-count']).toBe('3');
      expect(res.headers.link).toBe(
        `</users/${ada.id}/posts?limit=2&page=1>; rel="first", ` +
          `</users/${ada.id}/posts?limit=2&page=2>; rel="next", ` +
          `</users/${ada.id}/posts?limit=2&page=2>; rel="last"`,
      );
    });

    it('sorts by title descending and by createdAt', async () => {
      await seedPosts(ada.id, ['b', 'c', 'a']);
      const byTitle = await t.http().get(`/users/${ada.id}/posts?sort=-title`).expect(200);
      expect(byTitle.body.map((post: Post) => post.title)).toEqual(['c', 'b', 'a']);
      const byCreated = await t.http().get(`/users/${ada.id}/posts?sort=createdAt`).expect(200);
      expect(byCreated.body.map((post: Post) => post.title)).toEqual(['b', 'c', 'a']);
    });

    it.each([
      ['sort=name', 'sort field name is not one of id, title, createdAt, updatedAt'],
      ['limit=101', 'limit must be an integer between 1 and 100'],
      ['page=0', 'page must be an integer between 1 and 1000000'],
    ])('answers 400 for ?%s', async (query, error) => {
      expect((await t.http().get(`/users/${ada.id}/posts?${query}`).expect(400)).body).toEqual({
        error,
      });
    });

    it('answers [] for a user without posts and 404 for a missing user', async () => {
      await t.http().get(`/users/${bob.id}/posts`).expect(200, []);
      expect((await t.http().get('/users/999/posts').expect(404)).body).toEqual(userNotFound(999));
    });
  });

  describe('GET /users/:id/posts/:postId', () => {
    it('returns the post', async () => {
      const [post] = await seedPosts(ada.id, ['hello']);
      const res = await t.http().get(`/users/${ada.id}/posts/${post.id}`).expect(200);
      expect(res.body).toEqual({
        id: post.id,
        userId: ada.id,
        title: 'hello',
        body: '',
        createdAt: post.createdAt.toISOString(),
        updatedAt: post.updatedAt.toISOString(),
      });
    });

    it('answers 404 when the post belongs to another user', async () => {
      const [post] = await seedPosts(ada.id, ['hello']);
      const res = await t.http().get(`/users/${bob.id}/posts/${post.id}`).expect(404);
      expect(res.body).toEqual({ error: `post ${post.id} of user ${bob.id} not found` });
      expect((await t.http().get(`/users/999/posts/${post.id}`).expect(404)).body).toEqual(
        userNotFound(999),
      );
    });

    it.each(['0', 'abc', '2147483648'])('answers 400 for the post id %s', async (postId) => {
      expect((await t.http().get(`/users/${ada.id}/posts/${postId}`).expect(400)).body).toEqual(
        INVALID_ID,
      );
    });
  });

  it('deletes a user’s posts with the user', async () => {
    await seedPosts(ada.id, ['a1', 'a2']);
    await seedPosts(bob.id, ['b1']);
    await t.http().delete(`/users/${ada.id}`).expect(204);
    expect(await posts.countBy({ userId: ada.id })).toBe(0);
    expect(await posts.countBy({ userId: bob.id })).toBe(1);
    await t.http().get(`/users/${ada.id}/posts`).expect(404);
  });
});
