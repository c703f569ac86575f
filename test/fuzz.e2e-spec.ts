// Property-based tests (fast-check) of every HTTP route and of gRPC GetUser, against the real app
// and real PostgreSQL. Properties that hold for any input:
//   - no answer is 5xx (gRPC: never UNKNOWN, never INTERNAL for a decodable message);
//   - every non-2xx body is {"error": string} (plus `details` for validation errors) with nothing
//     internal in it: no stack trace, SQL, driver error or file path;
//   - a rejected request changes no row (md5 checksum of users and posts before and after);
//   - an accepted write comes back identical through GET and through gRPC GetUser;
//   - the status is the one docs/api.md gives for that input (a model of its rules decides).
// Seeded: FUZZ_SEED (default below) makes every run generate the same inputs; FUZZ_RUNS (default
// 40) is the number of inputs per property. fast-check prints the seed, path and shrunk
// counterexample of a failure; replay it with FUZZ_SEED=<seed>.
//
//   FUZZ_RUNS=2000 npx jest --runInBand test/fuzz.e2e-spec.ts     # a longer run
import * as grpc from '@grpc/grpc-js';
import { isEmail } from 'class-validator';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {
  getUser,
  getUserRaw,
  rawClient,
  usersClient,
  type UsersClient,
} from '../scripts/lib/grpc-client.mjs';
import { type Reply, send } from '../scripts/lib/http-client.mjs';
import { findLeak } from '../scripts/lib/leak-patterns.mjs';
import { projectRoot } from '../src/project-root.js';
import { INVALID_API_KEY, INVALID_ID, ISO_DATE, NOT_JSON } from './expected-errors.js';
import { createTestApp, resetDatabase, TEST_API_KEYS, type TestApp } from './test-app.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
/** fast-check settings of every property: seeded, bounded. */
const settings = (numRuns = RUNS) => ({ seed: SEED, numRuns });

const BODY_LIMIT = 102_400;
const MAX_ID = 2_147_483_647;
const ROLE = /^[a-z0-9_-]{1,32}$/;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// ---------------------------------------------------------------------------------------------
// HTTP, raw: node:http sends paths, methods, headers and bodies exactly as generated.

/** A request as the generators build it; sent exactly as given. */
interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked?: boolean;
}

let agent: http.Agent;

const sendRaw = (sent: Sent): Promise<Reply> => send(t.url, { ...sent, agent });

const json = (value: unknown) => JSON.stringify(value);
const post = (target: string, value: unknown) =>
  sendRaw({
    method: 'POST',
    path: target,
    headers: { 'content-type': 'application/json' },
    body: json(value),
  });

function assertNothingInternal(text: string, request: string): void {
  const pattern = findLeak(text, request);
  if (pattern) throw new Error(`response leaks ${pattern}: ${text.slice(0, 500)}`);
}

/** What any answer must satisfy: not 5xx, an x-request-id, and a clean JSON error body. */
function checkReply(sent: Sent, reply: Reply): unknown {
  const request = `${sent.method} ${sent.path} ${JSON.stringify(sent.headers ?? {})} ${String(
    sent.body ?? '',
  )}`;
  if (reply.status >= 500) {
    throw new Error(
      `${sent.method} ${sent.path.slice(0, 200)} answered ${reply.status}: ${reply.text}`,
    );
  }
  expect(reply.headers['x-request-id']).toMatch(REQUEST_ID);
  if (sent.method === 'HEAD') return undefined;
  assertNothingInternal(reply.text, request);
  if (reply.status < 400)
    return reply.headers['content-type']?.includes('json')
      ? JSON.parse(reply.text || 'null')
      : undefined;
  expect(reply.headers['content-type']).toMatch(/^application\/json; charset=utf-8$/);
  const body = JSON.parse(reply.text) as Record<string, unknown>;
  expect(Object.keys(body).filter((key) => key !== 'error' && key !== 'details')).toEqual([]);
  expect(typeof body.error).toBe('string');
  expect((body.error as string).length).toBeGreaterThan(0);
  if (body.details !== undefined) {
    expect(Array.isArray(body.details)).toBe(true);
    for (const detail of body.details as unknown[]) expect(typeof detail).toBe('string');
  }
  return body;
}

async function call(sent: Sent): Promise<{ reply: Reply; body: unknown }> {
  const reply = await sendRaw(sent);
  return { reply, body: checkReply(sent, reply) };
}

// ---------------------------------------------------------------------------------------------
// The database: checksums and lookups for the model.

let t: TestApp;

const query = <T = Record<string, unknown>>(sql: string, parameters: unknown[] = []) =>
  t.dataSource.query<T[]>(sql, parameters);

async function checksum(): Promise<string> {
  const [row] = await query<{ sum: string }>(
    `SELECT (SELECT md5(coalesce(string_agg(u::text, ',' ORDER BY id), '')) FROM users u) || ':' ||
            (SELECT md5(coalesce(string_agg(p::text, ',' ORDER BY id), '')) FROM posts p) AS sum`,
  );
  return row.sum;
}

async function userExists(id: number): Promise<boolean> {
  return (await query('SELECT 1 FROM users WHERE id = $1', [id])).length > 0;
}

/** Is the email taken, ignoring case (the unique index's own `lower()`), by a user other than `id`? */
async function emailTaken(email: unknown, id = 0): Promise<boolean> {
  // A string PostgreSQL cannot take (NUL) is rejected by validation before any query anyway.
  if (typeof email !== 'string' || email.includes('\u0000')) return false;
  const rows = await query('SELECT 1 FROM users WHERE lower(email) = lower($1) AND id <> $2', [
    email,
    id,
  ]);
  return rows.length > 0;
}

/** Known users (with emails to collide with) and posts; ids restart at 1 for every test. */
async function seedDatabase(): Promise<void> {
  await resetDatabase(t.dataSource);
  for (let n = 1; n <= 6; n++) {
    const user = {
      name: `User ${n}`,
      email: `taken-${n}@example.com`,
      role: n % 2 ? 'admin' : 'member',
    };
    expect((await post('/users', user)).status).toBe(201);
    for (let p = 1; p <= 2; p++) {
      expect(
        (await post(`/users/${n}/posts`, { title: `Post ${n}.${p}`, body: 'text' })).status,
      ).toBe(201);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// gRPC

let users: UsersClient;
let raw: grpc.Client;
const DEADLINE = { deadlineMs: 5000 };

// ---------------------------------------------------------------------------------------------
// Generators

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const specialChar = fc.constantFrom(
  '\u0000',
  ' ',
  '\t',
  '\n',
  '\r',
  '\u00a0',
  '\ufeff',
  '\u2028',
  '\u3000',
  '"',
  '\\',
  '%',
  '/',
  '.',
  '<',
  "'",
  '@',
  '😀',
  '\u0301',
  '\uffff',
  '\ufffe',
  '\u{10ffff}',
);
const anyChar = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: specialChar },
  { weight: 1, arbitrary: loneSurrogate },
);

/** Short strings of anything: NUL, unpaired surrogates, astral characters, whitespace. */
const nastyString = fc.string({ unit: anyChar, maxLength: 16 });

/** Strings around the length limits (100, 200, 254, 10,000 code points), padded or not. */
const sizedString = fc
  .tuple(
    fc.constantFrom('a', 'é', '😀', ' ', 'x '),
    fc.oneof(
      fc.integer({ min: 0, max: 5 }),
      fc.integer({ min: 95, max: 105 }),
      fc.integer({ min: 195, max: 205 }),
      fc.integer({ min: 250, max: 258 }),
      fc.integer({ min: 9995, max: 10005 }),
    ),
    fc.constantFrom('', ' ', '\t\n'),
  )
  .map(([unit, n, pad]) => pad + unit.repeat(n) + pad);

/** A huge string: well past every field limit, sometimes past the body limit. */
const hugeString = fc.integer({ min: 10_000, max: 120_000 }).map((n) => 'h'.repeat(n));

const anyString = fc.oneof(
  { weight: 6, arbitrary: nastyString },
  { weight: 2, arbitrary: sizedString },
  { weight: 1, arbitrary: hugeString },
);

/** A JSON value of any type, strings included, nested a few levels. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: anyString },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, '', []) },
  { weight: 1, arbitrary: fc.array(anyString, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(nastyString, anyString, { maxKeys: 3 }) },
);

const smallJson = fc.oneof(nastyString, fc.jsonValue({ maxDepth: 2 }));

const validName = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
  sizedString,
  fc.constantFrom('Ada', '  Grace Hopper  ', '😀', 'ß', "O'Brien", '<script>'),
);
const knownEmail = fc
  .tuple(fc.integer({ min: 1, max: 8 }), fc.boolean())
  .map(([n, upper]) => (upper ? `TAKEN-${n}@EXAMPLE.COM` : `taken-${n}@example.com`));
const newEmail = fc.oneof(
  fc.emailAddress(),
  fc.integer({ min: 1, max: 1e9 }).map((n) => `fuzz-${n}@example.com`),
);
const emailValue = fc.oneof(
  { weight: 4, arbitrary: newEmail },
  { weight: 2, arbitrary: knownEmail },
  { weight: 1, arbitrary: fc.constant(null) },
  // An email with an unpaired surrogate has a property of its own (unstorable text, below).
  {
    weight: 2,
    arbitrary: anyJson.filter((v) => typeof v !== 'string' || v.isWellFormed()),
  },
);
const validRole = fc.stringMatching(/^[a-z0-9_-]{1,32}$/);
const roleValue = fc.oneof({ weight: 5, arbitrary: validRole }, { weight: 1, arbitrary: anyJson });

/** Field names a client may not send: the assigned ones, near-misses and random ones. */
const extraKey = fc.oneof(
  fc.constantFrom('id', 'createdAt', 'updatedAt', 'userId', 'Name', 'NAME', 'name ', 'e-mail', ''),
  nastyString.filter((key) => !['name', 'email', 'role', 'title', 'body'].includes(key)),
);
/** Names of Object.prototype members: unknown fields that class-transformer treats specially. */
const prototypeKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  '__defineGetter__',
);

type Entry = [string, unknown];
/** A JSON object written from entries, so `__proto__` and repeated keys reach the wire as such. */
const objectText = (entries: Entry[]) =>
  `{${entries.map(([key, value]) => `${json(key)}:${json(value)}`).join(',')}}`;

const maybe = <T>(arbitrary: fc.Arbitrary<T>, weight = 4) =>
  fc.option(arbitrary, { nil: undefined, freq: weight });

/** Bodies for users and posts: mostly objects of the right fields, sometimes anything at all. */
function bodyText(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string | undefined> {
  const object = fc
    .tuple(
      ...Object.entries(fields).map(([name, value]) =>
        maybe(
          value.map((v): Entry => [name, v]),
          6,
        ),
      ),
      fc.oneof(
        { weight: 10, arbitrary: fc.constant([] as Entry[]) },
        {
          weight: 1,
          arbitrary: fc.array(fc.tuple(extraKey, anyJson), { minLength: 1, maxLength: 2 }),
        },
      ),
    )
    .map((parts) => {
      // Not parts.pop(): fast-check may map the same generated value again.
      const extras = parts[parts.length - 1] as Entry[];
      const known = parts.slice(0, -1).filter(Boolean) as Entry[];
      return objectText([...extras.slice(1), ...known, ...extras.slice(0, 1)]);
    });
  return fc.oneof(
    { weight: 20, arbitrary: object },
    { weight: 1, arbitrary: anyJson.map(json) },
    // Malformed JSON: a valid body cut short, or a random string.
    {
      weight: 1,
      arbitrary: fc.tuple(object, fc.nat()).map(([text, n]) => text.slice(0, n % text.length)),
    },
    { weight: 1, arbitrary: nastyString },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const userBody = bodyText({
  name: fc.oneof({ weight: 5, arbitrary: validName }, { weight: 1, arbitrary: anyJson }),
  email: emailValue,
  role: roleValue,
});
const postBody = bodyText({
  title: fc.oneof({ weight: 5, arbitrary: validName }, { weight: 1, arbitrary: anyJson }),
  body: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 50 }), sizedString, anyJson),
});

/** Path ids: ones that exist, ones that do not, and everything docs/api.md says is a 400. */
const idString = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 14 }).map(String) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '0',
      '-1',
      '1.5',
      '01',
      '+1',
      '1e3',
      '0x10',
      ' 1',
      '1 ',
      'abc',
      '1abc',
      ' ',
      '2147483647',
      '2147483648',
      '99999999999',
      '\u0661',
      '\uff11',
      '1\u0000',
      '..',
      '1/2',
    ),
  },
  { weight: 2, arbitrary: fc.integer({ min: -(2 ** 33), max: 2 ** 33 }).map(String) },
  { weight: 2, arbitrary: nastyString.filter((s) => s.length > 0) },
);
/** Every byte percent-encoded, only the unsafe ones, or (when safe) nothing at all. */
const pathSegment = fc.tuple(idString, fc.constantFrom('all', 'needed', 'raw')).map(([id, how]) => {
  const bytes = Buffer.from(id, 'utf8');
  const pct = (b: number) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`;
  const encoded = [...bytes]
    .map((b) =>
      how === 'all' || !/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) || (how === 'raw' && b > 127)
        ? pct(b)
        : String.fromCharCode(b),
    )
    .join('');
  // What the server decodes the segment to (an unpaired surrogate arrives as U+FFFD).
  return { segment: encoded, decoded: bytes.toString('utf8') };
});

/** A string as it reaches the server in UTF-8: an unpaired surrogate becomes U+FFFD. */
const asSent = (value: string) => Buffer.from(value, 'utf8').toString('utf8');

const parseIdModel = (value: string): number | undefined =>
  /^[1-9][0-9]*$/.test(value) && Number(value) <= MAX_ID ? Number(value) : undefined;

// ---------------------------------------------------------------------------------------------
// The validation rules of docs/api.md, as a model

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const has = (object: Json, key: string) => Object.prototype.hasOwnProperty.call(object, key);
const codePoints = (value: string) => [...value].length;
const storable = (value: string) => !value.includes('\u0000') && value.isWellFormed();

function text(value: unknown, min: number, max: number, trim: boolean): boolean {
  if (typeof value !== 'string') return false;
  const stored = trim ? value.trim() : value;
  return storable(stored) && codePoints(stored) >= min && codePoints(stored) <= max;
}
const emailOk = (value: unknown) =>
  value === null || (typeof value === 'string' && text(value, 1, 254, false) && isEmail(value, {}));
const roleOk = (value: unknown) => typeof value === 'string' && ROLE.test(value);
const onlyKeys = (object: Json, keys: string[]) =>
  Object.keys(object).every((k) => keys.includes(k));

/** POST /users and PUT /users/:id: a full representation. */
const validUser = (body: unknown): body is Json =>
  isObject(body) &&
  onlyKeys(body, ['name', 'email', 'role']) &&
  text(body.name, 1, 100, true) &&
  (!has(body, 'email') || emailOk(body.email)) &&
  (!has(body, 'role') || roleOk(body.role));

/** PATCH /users/:id: only the fields sent; null only for email; no body is no change. */
const validPatch = (body: unknown): body is Json =>
  body === undefined ||
  (isObject(body) &&
    onlyKeys(body, ['name', 'email', 'role']) &&
    (!has(body, 'name') || text(body.name, 1, 100, true)) &&
    (!has(body, 'email') || emailOk(body.email)) &&
    (!has(body, 'role') || roleOk(body.role)));

const validPost = (body: unknown): body is Json =>
  isObject(body) &&
  onlyKeys(body, ['title', 'body']) &&
  text(body.title, 1, 200, true) &&
  (!has(body, 'body') || text(body.body, 0, 10_000, false));

/** What the server parses `text` to: 'malformed' when it is not JSON. */
function parsed(bodyText: string | undefined): unknown {
  // Content-Length: 0 is no body at all, the same as none.
  if (bodyText === undefined || bodyText === '') return undefined;
  const received = Buffer.from(bodyText, 'utf8')
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  try {
    return JSON.parse(received);
  } catch {
    return 'malformed' as const;
  }
}

const oversized = (bodyText: string | undefined) =>
  bodyText !== undefined && Buffer.byteLength(bodyText) > BODY_LIMIT;

function expectedUser(body: Json, id: number, before?: Json) {
  const merged: Json = before ? { ...before } : { role: 'member' };
  if (has(body, 'name')) merged.name = (body.name as string).trim();
  if (has(body, 'role')) merged.role = body.role;
  if (has(body, 'email')) {
    if (body.email === null) delete merged.email;
    else merged.email = body.email;
  }
  return {
    ...merged,
    id,
    createdAt: expect.stringMatching(ISO_DATE),
    updatedAt: expect.stringMatching(ISO_DATE),
  };
}

/** An accepted user write is visible, identical, over HTTP and gRPC. */
async function assertUserRoundTrip(user: Json): Promise<void> {
  const id = user.id as number;
  const got = await call({ method: 'GET', path: `/users/${id}` });
  expect(got.reply.status).toBe(200);
  expect(got.body).toEqual(user);
  expect(await getUser(users, id, DEADLINE)).toEqual({
    code: grpc.status.OK,
    reply: { id, name: user.name },
  });
}

// ---------------------------------------------------------------------------------------------

describe('fuzz: properties of every route (e2e, fast-check)', () => {
  beforeAll(async () => {
    t = await createTestApp({ grpc: true });
    agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    users = usersClient(t.grpcAddress);
    raw = rawClient(t.grpcAddress);
  });
  beforeEach(() => seedDatabase());
  afterAll(async () => {
    users?.close();
    raw?.close();
    agent?.destroy();
    if (t) {
      await resetDatabase(t.dataSource);
      await t.close();
    }
  });

  it('POST /users: the documented rules decide every status; rejected bodies change nothing; accepted ones round-trip', async () => {
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
    '%s /users/:id: the documented rules decide; rejected changes nothing; accepted round-trips',
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
              ? { role: 'member' }
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

  it('POST /users/:id/posts: the documented rules decide; rejected changes nothing; accepted round-trips', async () => {
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
    const routes = [
      'POST /users',
      'PUT /users/1',
      'PATCH /users/1',
      'POST /users/1/posts',
      'POST /echo',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
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
    const routes = [
      'POST /users',
      'PUT /users/1',
      'PATCH /users/1',
      'POST /users/1/posts',
      'POST /echo',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
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

  it('list queries: page, limit, sort and role are validated as documented; GETs change nothing', async () => {
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

  it('gRPC GetUser: any int32 id is OK (the stored name), NOT_FOUND or INVALID_ARGUMENT', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.integer({ min: 1, max: 10 }),
          fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
          fc.constantFrom(0, -1, MAX_ID, -(2 ** 31)),
        ),
        async (id) => {
          const [row] = await query<{ name: string }>('SELECT name FROM users WHERE id = $1', [id]);
          if (id <= 0) {
            const error = await getUser(users, id, DEADLINE);
            expect(error.code).toBe(grpc.status.INVALID_ARGUMENT);
            expect(error.details).toBe('id must be a positive 32-bit integer');
          } else if (!row) {
            const error = await getUser(users, id, DEADLINE);
            expect(error.code).toBe(grpc.status.NOT_FOUND);
            expect(error.details).toBe(`user ${id} not found`);
          } else {
            expect(await getUser(users, id, DEADLINE)).toEqual({
              code: grpc.status.OK,
              reply: { id, name: row.name },
            });
          }
        },
      ),
      settings(),
    );
  });

  it('gRPC GetUser with arbitrary message bytes: never UNKNOWN, never internals, server stays healthy', async () => {
    const valid = fc.integer({ min: 1, max: 8 }).map((id) => Buffer.from([0x08, id]));
    const bytes = fc.uint8Array({ maxLength: 64 }).map((array) => Buffer.from(array));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          bytes,
          valid,
          fc.tuple(valid, bytes).map(([a, b]) => Buffer.concat([a, b])),
        ),
        async (message) => {
          const { code, details } = await getUserRaw(raw, message, DEADLINE);
          if (code !== grpc.status.OK) {
            expect([
              grpc.status.INVALID_ARGUMENT,
              grpc.status.NOT_FOUND,
              // grpc-js' own answer to a message it cannot decode ("Error deserializing request").
              grpc.status.INTERNAL,
            ]).toContain(code);
            assertNothingInternal(details ?? '', '');
          }
        },
      ),
      settings(),
    );
    expect(await getUser(users, 1, DEADLINE)).toEqual({
      code: grpc.status.OK,
      reply: { id: 1, name: 'User 1' },
    });
  });
});
