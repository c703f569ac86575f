// The app the Users API specs share: one per spec file, the tables emptied after each test, and
// the helpers that create, seed and count users. A spec calls useUsersApi() once inside its
// describe; Jest gives every test file its own copy of this module, so `t` and `users` (live
// bindings) are that file's own.
import type { Repository } from 'typeorm';
import { User } from '../../src/users/user.entity.js';
import { createTestApp, resetDatabase, type TestApp } from './test-app.js';

export let t: TestApp;
export let users: Repository<User>;

export function useUsersApi(): void {
  beforeAll(async () => {
    t = await createTestApp();
    users = t.dataSource.getRepository(User);
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(() => t.close());
}

export const create = (body: object) => t.http().post('/users').send(body);
export const seed = (rows: Partial<User>[]) => users.save(rows.map((row) => users.create(row)));
export const count = () => users.count();
