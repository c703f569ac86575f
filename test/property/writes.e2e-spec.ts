// Property-based: user and post writes. docs/api.md decides every status; a rejected write
// changes nothing; an accepted one reads back identical (harness: test/support/fuzz-app.ts).
import fc from 'fast-check';
import { ISO_DATE } from '../support/expected-errors.js';
import {
  expectedUser,
  isObject,
  type Json,
  parsed,
  oversized,
  validPatch,
  validPost,
  validUser,
} from '../support/contract-model.js';
import {
  assertUserRoundTrip,
  call,
  checksum,
  emailTaken,
  settings,
  useFuzzApp,
  userExists,
} from '../support/fuzz-app.js';
import { postBody, userBody } from '../support/fuzz-arbitraries.js';

describe('property: user and post writes follow docs/api.md (e2e, fast-check)', () => {
  useFuzzApp();

  it('POST /users: docs/api.md decides every status; rejected bodies change nothing; accepted ones round-trip', async () => {
    await fc.assert(
      fc.asyncProperty(userBody, async (bodyText) => {
        const before = await checksum();
        const body = parsed(bodyText);
        const conflict = isObject(body) && (await emailTaken(body.email));
        const sent = {
          method: 'POST',
          path: '/users',
          headers: { 'content-type': 'application/json' },
          body: bodyText,
        };
        const { reply, body: answer } = await call(sent);
        const expected = oversized(bodyText) ? 413 : !validUser(body) ? 400 : conflict ? 409 : 201;
        expect(reply.status).toBe(expected);
        if (reply.status !== 201) {
          expect(await checksum()).toBe(before);
          return;
        }
        const user = answer as Json;
        expect(user).toEqual(expectedUser(body as Json, user.id as number));
        expect(Object.keys(user).sort()).toEqual(Object.keys(expectedUser(body as Json, 0)).sort());
        expect(reply.headers.location).toBe(`/users/${String(user.id)}`);
        await assertUserRoundTrip(user);
      }),
      settings(),
    );
  });

  it.each(['PUT', 'PATCH'])(
    '%s /users/:id: docs/api.md decides; rejected changes nothing; accepted round-trips',
    async (method) => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 9 }), userBody, async (id, bodyText) => {
          const before = await checksum();
          const body = parsed(bodyText);
          const exists = await userExists(id);
          const previous = exists
            ? ((await call({ method: 'GET', path: `/users/${id}` })).body as Json)
            : undefined;
          const conflict = isObject(body) && (await emailTaken(body.email, id));
          const valid = method === 'PUT' ? validUser(body) : validPatch(body);
          const { reply, body: answer } = await call({
            method,
            path: `/users/${id}`,
            headers: { 'content-type': 'application/json' },
            body: bodyText,
          });
          const expected = oversized(bodyText)
            ? 413
            : !valid
              ? 400
              : !exists
                ? 404
                : conflict
                  ? 409
                  : 200;
          expect(reply.status).toBe(expected);
          if (reply.status !== 200) {
            expect(await checksum()).toBe(before);
            return;
          }
          const changes = (body ?? {}) as Json;
          // PUT: absent email clears it, absent role resets it; PATCH: only what was sent.
          const base =
            method === 'PUT'
              ? { role: 'member', active: true }
              : Object.fromEntries(
                  Object.entries(previous!).filter(
                    ([key]) => !['createdAt', 'updatedAt'].includes(key),
                  ),
                );
          const user = answer as Json;
          expect(user).toEqual({
            ...expectedUser(changes, id, base),
            createdAt: previous!.createdAt,
          });
          if (Object.keys(changes).length === 0) {
            // An empty PATCH changes nothing, updatedAt included.
            expect(user).toEqual(previous);
            expect(await checksum()).toBe(before);
          }
          await assertUserRoundTrip(user);
        }),
        settings(),
      );
    },
  );

  it('POST /users/:id/posts: docs/api.md decides; rejected changes nothing; accepted round-trips', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 9 }), postBody, async (userId, bodyText) => {
        const before = await checksum();
        const body = parsed(bodyText);
        const exists = await userExists(userId);
        const { reply, body: answer } = await call({
          method: 'POST',
          path: `/users/${userId}/posts`,
          headers: { 'content-type': 'application/json' },
          body: bodyText,
        });
        const expected = oversized(bodyText) ? 413 : !validPost(body) ? 400 : !exists ? 404 : 201;
        expect(reply.status).toBe(expected);
        if (reply.status !== 201) {
          expect(await checksum()).toBe(before);
          return;
        }
        const created = answer as Json;
        expect(created).toEqual({
          id: expect.any(Number),
          userId,
          title: ((body as Json).title as string).trim(),
          body: (body as Json).body ?? '',
          createdAt: expect.stringMatching(ISO_DATE),
          updatedAt: expect.stringMatching(ISO_DATE),
        });
        expect(reply.headers.location).toBe(`/users/${userId}/posts/${String(created.id)}`);
        const got = await call({
          method: 'GET',
          path: `/users/${userId}/posts/${String(created.id)}`,
        });
        expect(got.body).toEqual(created);
      }),
      settings(),
    );
  });
});
