// The harness of the property-based tests (test/property/, fast-check): the real app and real
// PostgreSQL, requests sent byte for byte, and the checks every answer must pass. Properties that
// hold for any input:
//   - no answer is 5xx (gRPC: never UNKNOWN, never INTERNAL for a decodable message);
//   - every non-2xx body is {"error": string} (plus `details` for validation errors) with nothing
//     internal in it: no stack trace, SQL, driver error or file path;
//   - a rejected request changes no row (md5 checksum of users and posts before and after);
//   - an accepted write comes back identical through GET and through gRPC GetUser;
//   - the status is the one docs/api.md gives for that input (a model of its rules decides,
//     test/support/contract-model.ts).
// Seeded: FUZZ_SEED (default below) makes every run generate the same inputs; FUZZ_RUNS (default
// 40) is the number of inputs per property. fast-check prints the seed, path and shrunk
// counterexample of a failure; replay it with FUZZ_SEED=<seed>.
//
//   FUZZ_RUNS=2000 npx jest test/property     # a longer run
//
// Each spec file calls useFuzzApp() once: Jest gives every test file its own copy of this module,
// so the app, the clients and the agent below (live bindings) are that file's own.
import * as grpc from '@grpc/grpc-js';
import http from 'node:http';
import {
  getUser,
  rawClient,
  usersClient,
  type UsersClient,
} from '../../scripts/lib/grpc-client.mjs';
import { type Reply, send } from '../../scripts/lib/http-client.mjs';
import { findLeak } from '../../scripts/lib/leak-patterns.mjs';
import { createTestApp, resetDatabase, type TestApp } from './test-app.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
/** fast-check settings of every property: seeded, bounded. */
export const settings = (numRuns = RUNS) => ({ seed: SEED, numRuns });

export const BODY_LIMIT = 102_400;
export const MAX_ID = 2_147_483_647;
export const ROLE = /^[a-z0-9_-]{1,32}$/;
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// ---------------------------------------------------------------------------------------------
// HTTP, raw: node:http sends paths, methods, headers and bodies exactly as generated.

/** A request as the generators build it; sent exactly as given. */
export interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked?: boolean;
}

let agent: http.Agent;

const sendRaw = (sent: Sent): Promise<Reply> => send(t.url, { ...sent, agent });

export const json = (value: unknown) => JSON.stringify(value);
const post = (target: string, value: unknown) =>
  sendRaw({
    method: 'POST',
    path: target,
    headers: { 'content-type': 'application/json' },
    body: json(value),
  });

export function assertNothingInternal(text: string, request: string): void {
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

export async function call(sent: Sent): Promise<{ reply: Reply; body: unknown }> {
  const reply = await sendRaw(sent);
  return { reply, body: checkReply(sent, reply) };
}

// ---------------------------------------------------------------------------------------------
// The database: checksums and lookups for the model.

let t: TestApp;

export const query = <T = Record<string, unknown>>(sql: string, parameters: unknown[] = []) =>
  t.dataSource.query<T[]>(sql, parameters);

export async function checksum(): Promise<string> {
  const [row] = await query<{ sum: string }>(
    `SELECT (SELECT md5(coalesce(string_agg(u::text, ',' ORDER BY id), '')) FROM users u) || ':' ||
            (SELECT md5(coalesce(string_agg(p::text, ',' ORDER BY id), '')) FROM posts p) AS sum`,
  );
  return row.sum;
}

export async function userExists(id: number): Promise<boolean> {
  return (await query('SELECT 1 FROM users WHERE id = $1', [id])).length > 0;
}

/** Is the email taken, ignoring case (the unique index's own `lower()`), by a user other than `id`? */
export async function emailTaken(email: unknown, id = 0): Promise<boolean> {
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

export let users: UsersClient;
export let raw: grpc.Client;
export const DEADLINE = { deadlineMs: 5000 };

/** An accepted user write is visible, identical, over HTTP and gRPC. */
export async function assertUserRoundTrip(user: Record<string, unknown>): Promise<void> {
  const id = user.id as number;
  const got = await call({ method: 'GET', path: `/users/${id}` });
  expect(got.reply.status).toBe(200);
  expect(got.body).toEqual(user);
  expect(await getUser(users, id, DEADLINE)).toEqual({
    code: grpc.status.OK,
    reply: { id, name: user.name },
  });
}

/** Starts the app (with gRPC) and the clients for the calling spec file; seeds before each test. */
export function useFuzzApp(): void {
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
}
