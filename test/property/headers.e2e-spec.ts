// Property-based: API keys, echoed request information, request ids and health checks, whatever
// the headers and query string (harness: test/support/fuzz-app.ts).
import fc from 'fast-check';
import { INVALID_API_KEY } from '../support/expected-errors.js';
import { call, REQUEST_ID, settings, useFuzzApp, UUID } from '../support/fuzz-app.js';
import { asSent, nastyString } from '../support/fuzz-arbitraries.js';
import { TEST_API_KEYS } from '../support/test-app.js';

describe('property: headers, keys and request ids (e2e, fast-check)', () => {
  useFuzzApp();

  it('/private: 200 only for a configured key, byte for byte; 401 with the fixed body otherwise', async () => {
    const headerChar = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
    const [current, previous] = TEST_API_KEYS;
    const candidate = fc.oneof(
      fc.constantFrom(current, previous, ` ${current} `, `${current}\t`),
      fc.constantFrom(
        current.toUpperCase(),
        current.slice(0, -1),
        `${current}x`,
        `${current},${previous}`,
        `${current}, ${previous}`,
        `Bearer ${current}`,
        '',
        ' ',
        'null',
        'undefined',
        'test-key-current-012345678\u00e9',
      ),
      fc.string({ unit: headerChar, maxLength: 64 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.option(candidate, { nil: undefined }),
        fc.constantFrom(
          'x-api-key',
          'X-API-KEY',
          'X-Api-Key',
          'authorization',
          'api-key',
          'x-api-keys',
        ),
        fc.boolean(),
        async (key, headerName, inQuery) => {
          const headers: Record<string, string> = {};
          if (key !== undefined) headers[headerName] = key;
          const target =
            inQuery && key ? `/private?x-api-key=${encodeURIComponent(key)}` : '/private';
          const { reply, body } = await call({ method: 'GET', path: target, headers });
          // HTTP drops the optional whitespace around a header value.
          const received = key?.replace(/^[ \t]+|[ \t]+$/g, '');
          const valid =
            headerName.toLowerCase() === 'x-api-key' &&
            received !== undefined &&
            TEST_API_KEYS.includes(received);
          if (valid) {
            expect(reply.status).toBe(200);
            expect(body).toEqual({ secretData: expect.any(Number) });
          } else {
            expect(reply.status).toBe(401);
            expect(body).toEqual(INVALID_API_KEY);
          }
        },
      ),
      settings(),
    );
  });

  it('/info: 200 for any headers and query; path has no query; credentials are never echoed', async () => {
    const headerChar = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
    // Secrets carry a marker no other generated value can contain ('!' is left out of those).
    const plainValue = fc.string({
      unit: headerChar.filter((c) => c !== '!'),
      maxLength: 30,
    });
    const secret = fc
      .string({ unit: headerChar, minLength: 1, maxLength: 30 })
      .map((s) => `!S!${s}!`);
    const headerName = fc.stringMatching(/^x-[a-z0-9-]{1,20}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(headerName, plainValue, { maxKeys: 4 }),
        fc.subarray(['x-api-key', 'Authorization', 'Cookie', 'proxy-authorization']),
        secret,
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'x-api-key', 'q'), plainValue), {
          maxLength: 3,
        }),
        async (extra, sensitive, secretValue, queryPairs) => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(extra)) {
            if (!['x-api-key', 'x-request-id'].includes(name)) headers[name] = value;
          }
          for (const name of sensitive) headers[name] = secretValue;
          const search = new URLSearchParams(queryPairs).toString();
          const { reply, body } = await call({
            method: 'GET',
            path: `/info${search ? `?${search}` : ''}`,
            headers,
          });
          expect(reply.status).toBe(200);
          const info = body as { method: string; path: string; headers: Record<string, unknown> };
          expect(info.method).toBe('GET');
          expect(info.path).toBe('/info');
          for (const name of sensitive) expect(info.headers[name.toLowerCase()]).toBe('[redacted]');
          expect(reply.text).not.toContain('!S!');
        },
      ),
      settings(),
    );
  });

  it('x-request-id: echoed when 1-128 of [A-Za-z0-9._:-], else a fresh UUID, on any route and status', async () => {
    const idChar = fc.oneof(
      fc.constantFrom(...'Aa0._:-'),
      fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.option(
          fc.oneof(fc.string({ unit: idChar, maxLength: 140 }), fc.constant('a'.repeat(129))),
          {
            nil: undefined,
          },
        ),
        fc.constantFrom('/health', '/users/abc', '/nope', '/users?page=0', '/private'),
        async (incoming, target) => {
          const { reply } = await call({
            method: 'GET',
            path: target,
            headers: incoming === undefined ? {} : { 'x-request-id': incoming },
          });
          const id = reply.headers['x-request-id'];
          if (incoming !== undefined && REQUEST_ID.test(incoming)) expect(id).toBe(incoming);
          else expect(id).toMatch(UUID);
        },
      ),
      settings(),
    );
  });

  it('/health and /health/ready: 200 whatever the query string and headers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/health', '/health/ready'),
        fc.array(fc.tuple(nastyString, nastyString), { maxLength: 3 }),
        async (target, pairs) => {
          const search = new URLSearchParams(
            pairs.map(([k, v]): [string, string] => [asSent(k), asSent(v)]),
          ).toString();
          const { reply, body } = await call({ method: 'GET', path: `${target}?${search}` });
          expect(reply.status).toBe(200);
          expect(body).toEqual(
            target === '/health' ? { ok: true } : { ok: true, database: 'up', shuttingDown: false },
          );
        },
      ),
      settings(),
    );
  });
});
