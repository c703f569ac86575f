// Property-based: request bodies of any size, depth, text and content type are answered by the
// rules of docs/api.md, never with a 5xx, and a refused one stores nothing (harness: test/support/fuzz-app.ts).
import fc from 'fast-check';
import { NOT_JSON } from '../support/expected-errors.js';
import { oversized, parsed } from '../support/contract-model.js';
import { BODY_LIMIT, call, checksum, json, settings, useFuzzApp } from '../support/fuzz-app.js';
import {
  anyChar,
  anyJson,
  type Entry,
  loneSurrogate,
  objectText,
  prototypeKey,
  smallJson,
  userBody,
} from '../support/fuzz-arbitraries.js';

/** Every route that takes a body. */
const BODY_ROUTES = [
  'POST /users',
  'PUT /users/1',
  'PATCH /users/1',
  'POST /users/1/posts',
  'POST /echo',
];

describe('property: request bodies are answered as docs/api.md says, never a 5xx (e2e, fast-check)', () => {
  useFuzzApp();

  it('POST /echo: any JSON value comes back as sent; a body over the limit is 413', async () => {
    const value = fc.oneof(
      { weight: 4, arbitrary: anyJson },
      { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 6, stringUnit: anyChar }) },
      { weight: 1, arbitrary: userBody.map((text) => parsed(text) ?? null) },
    );
    await fc.assert(
      fc.asyncProperty(value, async (sentValue) => {
        const before = await checksum();
        const bodyText = json(sentValue);
        const { reply } = await call({
          method: 'POST',
          path: '/echo',
          headers: { 'content-type': 'application/json' },
          body: bodyText,
        });
        if (oversized(bodyText)) {
          expect(reply.status).toBe(413);
        } else {
          expect(reply.status).toBe(200);
          expect(reply.text).toBe(`{"youSent":${json(JSON.parse(bodyText))}}`);
        }
        expect(await checksum()).toBe(before);
      }),
      settings(),
    );
  });

  it('a body over BODY_LIMIT is 413 on every body route, with or without Content-Length', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...BODY_ROUTES),
        fc.oneof(
          fc.integer({ min: BODY_LIMIT - 64, max: BODY_LIMIT + 64 }),
          // At least 20,000 bytes: too long for any field, so only /echo accepts it.
          fc.integer({ min: 20_000, max: 3 * BODY_LIMIT }),
        ),
        fc.boolean(),
        async (route, size, chunked) => {
          const [method, target] = route.split(' ');
          const before = await checksum();
          const field = target.endsWith('posts') ? 'title' : target === '/echo' ? 'x' : 'name';
          const bodyText = `{"${field}":"${'z'.repeat(Math.max(0, size - field.length - 7))}"}`;
          const { reply, body } = await call({
            method,
            path: target,
            headers: { 'content-type': 'application/json' },
            body: bodyText,
            chunked,
          });
          if (Buffer.byteLength(bodyText) > BODY_LIMIT) {
            expect(reply.status).toBe(413);
            expect(body).toEqual({
              error: `request body is larger than the limit of ${BODY_LIMIT} bytes`,
            });
          } else {
            expect(reply.status).toBe(target === '/echo' ? 200 : 400);
          }
          expect(await checksum()).toBe(before);
        },
      ),
      settings(),
    );
  });

  it('deeply nested JSON is never a 5xx on any body route', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...BODY_ROUTES),
        fc.constantFrom('array', 'object'),
        fc.integer({ min: 1, max: 40_000 }),
        fc.constantFrom('top', 'field'),
        async (route, shape, depth, where) => {
          const [method, target] = route.split(' ');
          const before = await checksum();
          const nested =
            shape === 'array'
              ? '['.repeat(depth) + ']'.repeat(depth)
              : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
          const field = target.endsWith('posts') ? 'title' : 'name';
          const bodyText = where === 'top' ? nested : `{"${field}":${nested}}`;
          const { reply } = await call({
            method,
            path: target,
            headers: { 'content-type': 'application/json' },
            body: bodyText,
          });
          if (target === '/echo' && reply.status === 200) {
            expect(reply.text).toBe(`{"youSent":${bodyText}}`);
          } else {
            // A DTO route rejects it; /echo may refuse a depth it cannot answer, but not with 5xx.
            expect([400, 413]).toContain(reply.status);
          }
          expect(await checksum()).toBe(before);
        },
      ),
      settings(),
    );
  });

  it('text with NUL or an unpaired surrogate is a 400 in every field of every route, nothing stored', async () => {
    const fields: Record<string, [string, Entry[]]> = {
      name: ['POST /users', []],
      email: ['POST /users', [['name', 'N']]],
      role: ['POST /users', [['name', 'N']]],
      title: ['POST /users/1/posts', []],
      body: ['POST /users/1/posts', [['title', 'T']]],
    };
    const unstorable = fc
      .tuple(
        fc.constantFrom('', 'a', 'a@example.com', 'x y'),
        fc.oneof(fc.constant('\u0000'), loneSurrogate),
        fc.constantFrom('', 'b', '@example.com'),
      )
      .map(([before, bad, after]) => before + bad + after);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(fields)),
        fc.constantFrom('POST', 'PUT', 'PATCH'),
        unstorable,
        async (field, method, value) => {
          const [route, others] = fields[field];
          const posts = route.endsWith('posts');
          // Posts are only created; users are created, replaced and patched.
          const [verb, target] =
            posts || method === 'POST' ? route.split(' ') : [method, '/users/1'];
          const before = await checksum();
          const { reply } = await call({
            method: verb,
            path: target,
            headers: { 'content-type': 'application/json' },
            body: objectText([...others, [field, value]]),
          });
          expect(reply.status).toBe(400);
          expect(await checksum()).toBe(before);
        },
      ),
      settings(),
    );
  });

  it('fields named like Object.prototype members are unknown fields: 400, nothing stored', async () => {
    const routes = ['POST /users', 'PUT /users/1', 'PATCH /users/1', 'POST /users/1/posts'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        prototypeKey,
        smallJson,
        async (route, key, value) => {
          const [method, target] = route.split(' ');
          const before = await checksum();
          const valid: Entry = target.endsWith('posts') ? ['title', 'T'] : ['name', 'N'];
          const bodyText = objectText([valid, [key, value]]);
          const { reply } = await call({
            method,
            path: target,
            headers: { 'content-type': 'application/json' },
            body: bodyText,
          });
          expect(reply.status).toBe(oversized(bodyText) ? 413 : 400);
          expect(await checksum()).toBe(before);
        },
      ),
      settings(),
    );
  });

  it('a body that is not JSON is 415 on every body route, and any content type is never a 5xx', async () => {
    const routes = [
      'POST /users',
      'PUT /users/2',
      'PATCH /users/2',
      'POST /users/2/posts',
      'POST /echo',
    ];
    const contentType = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          'text/plain',
          'text/json',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/xml',
          'application/json-patch+json',
          'application/vnd.api+json',
          'application/jsonx',
          '*/*',
          'application/*',
          'json',
          'garbage',
          '',
          'application/merge-patch+json',
        ),
      },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          'application/json',
          'Application/JSON',
          'application/json; charset=utf-8',
          'application/json;charset=UTF-8',
          'application/json; charset=latin1',
          'application/json; charset=utf-16',
          'application/json; charset=nope',
          'application/json; boundary=x',
        ),
      },
      {
        weight: 1,
        arbitrary: fc.string({
          unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
          maxLength: 40,
        }),
      },
    );
    const encoding = fc.constantFrom(
      undefined,
      undefined,
      undefined,
      'gzip',
      'deflate',
      'br',
      'identity',
      'x-unknown',
      'gzip, gzip',
    );
    const payload = fc.oneof(
      fc.constantFrom('{"name":"Typed","title":"Typed"}', 'name=a', '<a/>', '{}'),
      fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        contentType,
        encoding,
        payload,
        async (route, type, enc, body) => {
          const [method, target] = route.split(' ');
          const before = await checksum();
          const headers: Record<string, string> = {};
          if (type !== '') headers['content-type'] = type;
          if (enc) headers['content-encoding'] = enc;
          const { reply, body: answer } = await call({ method, path: target, headers, body });
          const mediaType = type.split(';')[0].trim().toLowerCase();
          const jsonType =
            mediaType === 'application/json' ||
            (method === 'PATCH' && mediaType === 'application/merge-patch+json');
          const knownType = [
            'text/plain',
            'text/json',
            'application/x-www-form-urlencoded',
            'multipart/form-data',
            'application/xml',
            'application/json-patch+json',
            'application/vnd.api+json',
            'application/jsonx',
            '*/*',
            'application/*',
            'json',
            'garbage',
            '',
            'application/merge-patch+json',
          ].includes(mediaType);
          if (!jsonType && knownType) {
            expect(reply.status).toBe(415);
            expect(answer).toEqual(NOT_JSON);
          }
          if (
            reply.status >= 400 ||
            !['POST', 'PUT', 'PATCH'].includes(method) ||
            target === '/echo'
          ) {
            expect(await checksum()).toBe(before);
          }
        },
      ),
      settings(),
    );
  });
});
