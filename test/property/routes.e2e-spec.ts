// Property-based: paths, ids, list queries, methods and static files; anything that is not a
// route, an id or a file is a JSON 400 or 404 (harness: test/support/fuzz-app.ts).
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getUser } from '../../scripts/lib/grpc-client.mjs';
import { projectRoot } from '../../src/project-root.js';
import { INVALID_ID } from '../support/expected-errors.js';
import type { Json } from '../support/contract-model.js';
import {
  assertUserRoundTrip,
  call,
  checksum,
  DEADLINE,
  json,
  query,
  ROLE,
  settings,
  useFuzzApp,
  userExists,
  users,
} from '../support/fuzz-app.js';
import { asSent, nastyString, parseIdModel, pathSegment } from '../support/fuzz-arbitraries.js';

describe('property: paths, ids, queries, methods and files (e2e, fast-check)', () => {
  useFuzzApp();

  it('path ids: 400 before any query when invalid (after percent-decoding), else found or 404', async () => {
    const route = fc.constantFrom(
      'GET /users/{id}',
      'DELETE /users/{id}',
      'PUT /users/{id}',
      'PATCH /users/{id}',
      'GET /users/{id}/posts',
      'POST /users/{id}/posts',
      'GET /users/{id}/posts/{post}',
      'GET /users/1/posts/{id}',
    );
    await fc.assert(
      fc.asyncProperty(route, pathSegment, pathSegment, async (template, id, postId) => {
        const [method, pattern] = template.split(' ');
        const target = pattern.replace('{id}', id.segment).replace('{post}', postId.segment);
        const before = await checksum();
        const body =
          method === 'PUT'
            ? { name: 'Fuzz' }
            : method === 'PATCH'
              ? {}
              : method === 'POST'
                ? { title: 'T' }
                : undefined;
        // The expected status, from the path and the rows as they are before the request.
        const ids = pattern.includes('{post}') ? [id.decoded, postId.decoded] : [id.decoded];
        const parsedIds = ids.map(parseIdModel);
        const valid = parsedIds.every((value) => value !== undefined);
        const userId = pattern.startsWith('/users/1/') ? 1 : parsedIds[0]!;
        const postNumber = pattern.startsWith('/users/1/') ? parsedIds[0]! : parsedIds[1];
        let expected = 400;
        if (valid) {
          const exists = await userExists(userId);
          expected = !exists ? 404 : method === 'DELETE' ? 204 : method === 'POST' ? 201 : 200;
          if (exists && postNumber !== undefined) {
            const rows = await query('SELECT 1 FROM posts WHERE id = $1 AND user_id = $2', [
              postNumber,
              userId,
            ]);
            expected = rows.length ? 200 : 404;
          }
        }
        const { reply, body: answer } = await call({
          method,
          path: target,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body: body === undefined ? undefined : json(body),
        });
        expect(reply.status).toBe(expected);
        if (!valid) {
          // Percent-decoding that fails is a 400 too, with its own message.
          if (!/%(?![0-9A-F]{2})/i.test(target)) expect(answer).toEqual(INVALID_ID);
          expect(await checksum()).toBe(before);
          return;
        }
        // Unchanged rows unless the request was an accepted write.
        if (reply.status >= 400 || method === 'GET') expect(await checksum()).toBe(before);
        if (method === 'DELETE' && reply.status === 204) {
          expect((await call({ method: 'GET', path: `/users/${userId}` })).reply.status).toBe(404);
          expect((await getUser(users, userId, DEADLINE)).code).toBe(grpc.status.NOT_FOUND);
          expect(await query('SELECT 1 FROM posts WHERE user_id = $1', [userId])).toEqual([]);
        }
        if ((method === 'PUT' || method === 'PATCH') && reply.status === 200) {
          await assertUserRoundTrip(answer as Json);
        }
      }),
      settings(),
    );
  });

  it('list queries: page, limit, sort and role are validated as docs/api.md says; GETs change nothing', async () => {
    const value = fc.oneof(
      fc.integer({ min: -5, max: 120 }).map(String),
      fc.constantFrom(
        '1000000',
        '1000001',
        '01',
        '+1',
        '1.0',
        '1e2',
        '',
        ' 1',
        '2147483648',
        '9'.repeat(20),
      ),
      fc.constantFrom(
        'id',
        '-id',
        'name',
        '-createdAt,name',
        'title',
        'email,-role',
        'id,id',
        'id,',
        ',',
        '--id',
        '-',
        'ID',
        'updatedAt,-email,role',
      ),
      fc.constantFrom('admin', 'member', 'nobody', 'Admin', 'a b', 'x'.repeat(33)),
      nastyString,
    );
    const key = fc.constantFrom('page', 'limit', 'sort', 'role', 'foo', 'page[]', 'Page', 'x y');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/users', '/users/1/posts', '/users/3/posts', '/users/42/posts'),
        fc.array(fc.tuple(key, value), { maxLength: 5 }),
        async (target, pairs) => {
          const search = new URLSearchParams(
            pairs.map(([k, v]): [string, string] => [k, asSent(v)]),
          );
          const before = await checksum();
          const { reply, body } = await call({
            method: 'GET',
            path: `${target}?${search.toString()}`,
          });
          const users = target === '/users';
          const fields = users
            ? ['id', 'name', 'email', 'role', 'createdAt', 'updatedAt']
            : ['id', 'title', 'createdAt', 'updatedAt'];
          const values = (name: string) => search.getAll(name);
          const once = (name: string) => values(name).length <= 1;
          const number = (name: string, max: number) =>
            values(name).every((v) => /^[1-9][0-9]*$/.test(v) && Number(v) <= max);
          const sortOk = values('sort').every((v) => {
            const names = v.split(',').map((item) => (item.startsWith('-') ? item.slice(1) : item));
            return names.every((n) => fields.includes(n)) && new Set(names).size === names.length;
          });
          const roleOk2 = !users || values('role').every((v) => ROLE.test(v));
          const valid =
            ['page', 'limit', 'sort', ...(users ? ['role'] : [])].every(once) &&
            number('page', 1_000_000) &&
            number('limit', 100) &&
            sortOk &&
            roleOk2;
          const userId = users ? undefined : Number(target.split('/')[2]);
          const exists = userId === undefined || (await userExists(userId));
          expect(reply.status).toBe(!valid ? 400 : exists ? 200 : 404);
          if (reply.status === 200) {
            const limit = Number(search.get('limit') ?? 20);
            const page = Number(search.get('page') ?? 1);
            const role = users ? search.get('role') : null;
            const [{ count }] = users
              ? await query<{ count: string }>(
                  'SELECT count(*) FROM users WHERE $1::text IS NULL OR role = $1',
                  [role],
                )
              : await query<{ count: string }>('SELECT count(*) FROM posts WHERE user_id = $1', [
                  userId,
                ]);
            const total = Number(count);
            expect(reply.headers['x-total-count']).toBe(String(total));
            expect(reply.headers.link).toMatch(/rel="first".*rel="last"/);
            const items = body as Json[];
            expect(items).toHaveLength(Math.max(0, Math.min(limit, total - (page - 1) * limit)));
            if (role) for (const item of items) expect(item.role).toBe(role);
          }
          expect(await checksum()).toBe(before);
        },
      ),
      settings(),
    );
  });

  it('methods a path does not support are a JSON 404, like unknown routes', async () => {
    const supported: Record<string, string[]> = {
      '/users': ['GET', 'POST'],
      '/users/3': ['GET', 'PUT', 'PATCH', 'DELETE'],
      '/users/3/posts': ['GET', 'POST'],
      '/users/3/posts/5': ['GET'],
      '/health': ['GET'],
      '/health/ready': ['GET'],
      '/info': ['GET'],
      '/private': ['GET'],
      '/echo': ['POST'],
      '/logo.png': ['GET'],
    };
    const unknownPath = fc
      .array(
        fc.constantFrom(
          'users',
          'posts',
          '3',
          'x',
          'api',
          'v1',
          'health',
          'admin',
          '.env',
          'index.html',
        ),
        {
          minLength: 1,
          maxLength: 4,
        },
      )
      .map((segments) => `/${segments.join('/')}`)
      // Leave out the paths that are routes (a bad id there is a 400, not a 404).
      .filter((p) => !(p in supported) && !/^\/users(\/[^/]+(\/posts(\/[^/]+)?)?)?$/.test(p));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constantFrom(...Object.keys(supported)), unknownPath),
        fc.constantFrom(
          'GET',
          'POST',
          'PUT',
          'PATCH',
          'DELETE',
          'OPTIONS',
          'TRACE',
          'PROPFIND',
          'PURGE',
          'COPY',
          'LOCK',
          'SEARCH',
        ),
        async (target, method) => {
          const before = await checksum();
          const { reply, body } = await call({ method, path: target });
          if (!(supported[target] ?? []).includes(method)) {
            expect(reply.status).toBe(404);
            expect(body).toEqual({ error: expect.stringMatching(/^no (route|such)/) });
          }
          if (method !== 'DELETE' && method !== 'POST') expect(await checksum()).toBe(before);
        },
      ),
      settings(),
    );
  });

  it('static files: only files inside public/ are ever served; everything else is a JSON 404/400', async () => {
    const logo = readFileSync(path.join(projectRoot(), 'public', 'logo.png'));
    const segment = fc.oneof(
      fc.constantFrom(
        'logo.png',
        '..',
        '.',
        '%2e%2e',
        '%2E%2e',
        '..%2f',
        '%2f',
        '%5c',
        '..\\',
        '.env',
        '.git',
        'package.json',
        'src',
        'public',
        'etc',
        'passwd',
        '%00',
        'logo.png%00',
        '%6cogo.png',
        'LOGO.PNG',
        'logo.png.',
        'index.html',
        '',
        '%',
        '%zz',
        '~',
      ),
      nastyString.map((s) => encodeURIComponent(Buffer.from(s).toString('utf8'))),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('GET', 'HEAD'),
        async (segments, method) => {
          const target = `/${segments.join('/')}`;
          const { reply } = await call({ method, path: target });
          expect([200, 400, 404]).toContain(reply.status);
          if (reply.status === 200) {
            expect(reply.headers['content-type']).toBe('image/png');
            if (method === 'GET') expect(reply.bytes.equals(logo)).toBe(true);
          } else if (method === 'GET') {
            expect(reply.headers['content-type']).toMatch(/^application\/json/);
          }
          if (target === '/logo.png' || target === '/%6cogo.png') expect(reply.status).toBe(200);
        },
      ),
      settings(),
    );
  });
});
