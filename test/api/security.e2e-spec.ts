// Security review, as tests:
//   - API keys are compared in constant time (SHA-256 digests, crypto.timingSafeEqual, every key
//     every time) — checked on the code's calls, not by timing;
//   - keys and the database password never reach the logs of the built service, on any path
//     (success, 401, 500 with a stack trace in the log, gRPC with credentials in metadata);
//   - an unhandled failure (a real SQL error) answers {"error":"internal server error"} over HTTP
//     and INTERNAL "internal error" over gRPC, with no stack trace, SQL or path; the cause is logged;
//   - the request body limit (413, before the body is read) and the gRPC receive limit
//     (RESOURCE_EXHAUSTED) are enforced;
//   - security headers on every response, and the container runs as a non-root user.
import { jest } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import type { ExecutionContext } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { getUserRaw } from '../../scripts/lib/grpc-client.mjs';
import { send } from '../../scripts/lib/http-client.mjs';
import { findLeak } from '../../scripts/lib/leak-patterns.mjs';
import { projectRoot } from '../../src/project-root.js';
import { INTERNAL_ERROR, INVALID_API_KEY } from '../support/expected-errors.js';
import {
  buildService,
  type ServiceProcess,
  startService,
  waitUntilReady,
} from '../support/service-process.js';
import {
  createTestApp,
  resetDatabase,
  testDatabaseUrl,
  type TestApp,
} from '../support/test-app.js';

const ROOT = projectRoot();

/** One request as given, on a connection of its own. */
const call = (
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
) => send(base, { method, path, headers, body });

/** A GetUserRequest: field 1 (id) as a varint. */
const getUserRequest = (id: number) => Buffer.from([0x08, id]);

/** Field 15, length-delimited: an unknown field the decoder skips, to pad a message to `size`. */
function padded(message: Buffer, size: number): Buffer {
  const header = (length: number) => {
    const bytes = [0x7a];
    let n = length;
    while (n >= 0x80) {
      bytes.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    bytes.push(n);
    return Buffer.from(bytes);
  };
  // The varint length of the padding depends on the padding's own length: settle it in two steps.
  let payload = size - message.length - header(size).length;
  payload = size - message.length - header(payload).length;
  const result = Buffer.concat([message, header(payload), Buffer.alloc(payload, 0x61)]);
  expect(result.length).toBe(size);
  return result;
}

function expectNothingInternal(text: string): void {
  expect(findLeak(text)).toBeUndefined();
}

describe('API key comparison (code level)', () => {
  it('digests the presented key and every configured key with SHA-256 and compares them all with timingSafeEqual', async () => {
    // A fresh copy of the guard module, loaded with node:crypto's timingSafeEqual wrapped to
    // record its calls (the copy the app uses was loaded before any mock could apply).
    const crypto = await import('node:crypto');
    const calls: [Buffer, Buffer][] = [];
    let ApiKeyGuard!: typeof import('../../src/utility/api-key.guard.js').ApiKeyGuard;
    let AppConfig!: typeof import('../../src/config/app-config.js').AppConfig;
    let validateEnv!: typeof import('../../src/config/env.validation.js').validateEnv;
    await jest.isolateModulesAsync(async () => {
      jest.unstable_mockModule('node:crypto', () => ({
        ...crypto,
        default: crypto,
        timingSafeEqual: (a: Buffer, b: Buffer) => {
          calls.push([a, b]);
          return crypto.timingSafeEqual(a, b);
        },
      }));
      ({ ApiKeyGuard } = await import('../../src/utility/api-key.guard.js'));
      ({ AppConfig } = await import('../../src/config/app-config.js'));
      ({ validateEnv } = await import('../../src/config/env.validation.js'));
    });
    const keys = ['first-key', 'a-much-longer-second-key-0123456789', 'k3'];
    const guard = new ApiKeyGuard(AppConfig.fromEnv(validateEnv({ API_KEYS: keys.join(',') })));
    const context = (headers: Record<string, unknown>) =>
      ({
        switchToHttp: () => ({ getRequest: () => ({ headers }) }),
      }) as unknown as ExecutionContext;
    const sha256 = (value: string) => crypto.createHash('sha256').update(value, 'utf8').digest();

    const presented = ['', 'x', 'first-key', 'k3', 'first-kez', 'f'.repeat(10_000), keys[1]];
    for (const value of presented) {
      calls.length = 0;
      const accepted = keys.includes(value);
      if (accepted) expect(guard.canActivate(context({ 'x-api-key': value }))).toBe(true);
      else
        // (by message: the isolated module copy has its own UnauthorizedException class)
        expect(() => guard.canActivate(context({ 'x-api-key': value }))).toThrow(
          INVALID_API_KEY.error,
        );
      // Every configured key, every time (no early exit on a match or a mismatch), each compare
      // on two 32-byte digests: neither the content nor the length of a key changes the work done.
      expect(calls).toHaveLength(keys.length);
      for (const [a, b] of calls) {
        expect([a.length, b.length]).toEqual([32, 32]);
        expect(b.equals(sha256(value))).toBe(true);
      }
      expect(calls.map(([a]) => a.toString('hex')).sort()).toEqual(
        keys.map((key) => sha256(key).toString('hex')).sort(),
      );
    }
  });

  it('has no other comparison of the key in the guard source', () => {
    const source = readFileSync(path.join(ROOT, 'src', 'utility', 'api-key.guard.ts'), 'utf8');
    expect(source).toMatch(/timingSafeEqual\(/);
    expect(source).toMatch(/createHash\('sha256'\)/);
    // No early-exit search or plain string comparison of keys.
    expect(source).not.toMatch(/\.(includes|indexOf|some|find|findIndex)\(/);
    const comparisons = source.replace(/typeof presented === 'string'/g, '');
    expect(comparisons).not.toMatch(/presented\s*[!=]==?|[!=]==?\s*presented|key\s*[!=]==?/);
    expect(source).not.toMatch(/\.compare\(|\.equals\(/);
  });
});

describe('the built service: secrets stay out of logs, internals out of responses (e2e)', () => {
  const role = 'users_security_test';
  const password = `pw-${randomUUID()}`;
  const keys = [`sk-current-${randomUUID()}`, `sk-previous-${randomUUID()}`];
  let admin: pg.Client;
  let serviceUrl: string;
  let service: ServiceProcess;

  beforeAll(async () => {
    buildService();
    // A database of its own, reached as a role whose password is distinctive enough to search for.
    admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${role} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await admin.query(`CREATE DATABASE ${role} OWNER ${role}`);
    const url = new URL(testDatabaseUrl());
    url.username = role;
    url.password = password;
    url.pathname = `/${role}`;
    serviceUrl = url.toString();
    service = await startService({
      DATABASE_URL: serviceUrl,
      MIGRATE_ON_BOOT: 'true',
      API_KEYS: keys.join(','),
      LOG_LEVEL: 'trace',
      SHUTDOWN_DRAIN_MS: '0',
    });
    await waitUntilReady(service, { timeoutMs: 20_000 });
  });

  afterAll(async () => {
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    await admin.query(`DROP DATABASE IF EXISTS ${role} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.end();
  });

  it('answers a failed query with the fixed 500 / INTERNAL, logs the cause, and never logs a key or the database password', async () => {
    const base = service.url;
    const created = await call(
      base,
      'POST',
      '/users',
      { 'content-type': 'application/json' },
      JSON.stringify({ name: 'Ada' }),
    );
    expect(created.status).toBe(201);
    const id = JSON.parse(created.text).id as number;

    // Keys on every path a client might put them: accepted, refused, and where they do not belong.
    const [key, previous] = keys;
    expect((await call(base, 'GET', '/private', { 'x-api-key': key })).status).toBe(200);
    expect((await call(base, 'GET', '/private', { 'x-api-key': previous })).status).toBe(200);
    const wrong = await call(base, 'GET', '/private', { 'x-api-key': `${key}x` });
    expect([wrong.status, JSON.parse(wrong.text)]).toEqual([401, INVALID_API_KEY]);
    expect(
      (await call(base, 'GET', '/private', { authorization: `Bearer ${key}`, cookie: `k=${key}` }))
        .status,
    ).toBe(401);
    expect((await call(base, 'GET', `/private?api_key=${key}`)).status).toBe(401);
    const info = await call(base, 'GET', `/info?x-api-key=${key}`, {
      'x-api-key': key,
      authorization: `Bearer ${previous}`,
      cookie: `session=${key}`,
    });
    expect(info.status).toBe(200);
    expect(info.text).not.toContain(key);
    expect(info.text).not.toContain(previous);

    // A real unhandled failure: the column the queries need is gone.
    const owner = new pg.Client({ connectionString: serviceUrl });
    await owner.connect();
    try {
      await owner.query('ALTER TABLE users RENAME COLUMN name TO name_gone');
      await owner.query('ALTER TABLE posts RENAME COLUMN title TO title_gone');
      const failures = [
        await call(base, 'GET', `/users/${id}`, { 'x-api-key': key }),
        await call(base, 'GET', '/users', { 'x-api-key': key }),
        await call(
          base,
          'POST',
          '/users',
          { 'content-type': 'application/json', 'x-api-key': key },
          JSON.stringify({ name: 'Bob' }),
        ),
        await call(
          base,
          'PATCH',
          `/users/${id}`,
          { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          JSON.stringify({ name: 'Bob' }),
        ),
        await call(base, 'GET', `/users/${id}/posts`, { cookie: `k=${key}` }),
      ];
      for (const failure of failures) {
        expect(failure.status).toBe(500);
        expect(JSON.parse(failure.text)).toEqual(INTERNAL_ERROR);
        expectNothingInternal(failure.text);
      }
      const metadata = new grpc.Metadata();
      metadata.set('x-api-key', key);
      metadata.set('authorization', `Bearer ${previous}`);
      const grpcFailure = await getUserRaw(service.grpcAddress, getUserRequest(id), { metadata });
      expect(grpcFailure).toEqual({ code: grpc.status.INTERNAL, details: 'internal error' });
    } finally {
      await owner.query('ALTER TABLE users RENAME COLUMN name_gone TO name').catch(() => undefined);
      await owner
        .query('ALTER TABLE posts RENAME COLUMN title_gone TO title')
        .catch(() => undefined);
      await owner.end();
    }

    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    const log = service.output();
    // The log has the requests and the cause of the 500s (so the test looked at the right log)…
    expect(log).toMatch(/GET \/private/);
    expect(log).toMatch(/column \\?"name\\?" does not exist/);
    // …and no key, in full or in part, nor the database password.
    for (const secret of [...keys, password]) {
      expect(log).not.toContain(secret);
      expect(log).not.toContain(secret.slice(-16));
    }
  });
});

describe('limits and headers (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ grpc: true, env: { BODY_LIMIT: '1kb' } });
  });
  afterAll(async () => {
    await resetDatabase(t.dataSource);
    await t.close();
  });

  const body = (size: number) => `{"name":"${'n'.repeat(size - 11)}"}`;

  it('refuses a body over BODY_LIMIT with 413, at the limit it is validated as usual', async () => {
    const at = await call(
      t.url,
      'POST',
      '/echo',
      { 'content-type': 'application/json' },
      body(1024),
    );
    expect(at.status).toBe(200);
    const over = await call(
      t.url,
      'POST',
      '/echo',
      { 'content-type': 'application/json' },
      body(1025),
    );
    expect([over.status, JSON.parse(over.text)]).toEqual([
      413,
      { error: 'request body is larger than the limit of 1024 bytes' },
    ]);
  });

  it('refuses a large streamed body with 413 without keeping it (chunked, no Content-Length)', async () => {
    // 20 MB in 64 KiB chunks: counted as it arrives, discarded once past the limit.
    const reply = await send(t.url, {
      method: 'POST',
      path: '/users',
      headers: { 'content-type': 'application/json' },
      chunked: true,
      body: [
        '{"name":"',
        ...Array.from({ length: 320 }, () => Buffer.alloc(64 * 1024, 0x61)),
        '"}',
      ],
    });
    expect([reply.status, JSON.parse(reply.text)]).toEqual([
      413,
      { error: 'request body is larger than the limit of 1024 bytes' },
    ]);
    expect((await t.http().get('/users').expect(200)).body).toEqual([]);
  });

  it('refuses a gRPC message over 64 KiB with RESOURCE_EXHAUSTED and keeps serving', async () => {
    const created = await t.http().post('/users').send({ name: 'Grace' }).expect(201);
    const id = created.body.id as number;
    // The unknown field is skipped by the decoder: at exactly 64 KiB the call is served.
    expect(await getUserRaw(t.grpcAddress, padded(getUserRequest(id), 64 * 1024))).toEqual({
      code: grpc.status.OK,
      reply: expect.any(Buffer),
    });
    const over = await getUserRaw(t.grpcAddress, padded(getUserRequest(id), 64 * 1024 + 1));
    expect(over.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expectNothingInternal(over.details ?? '');
    const huge = await getUserRaw(t.grpcAddress, padded(getUserRequest(id), 8 * 1024 * 1024));
    expect(huge.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(await getUserRaw(t.grpcAddress, getUserRequest(id))).toEqual({
      code: grpc.status.OK,
      reply: expect.any(Buffer),
    });
  });

  it('sends security headers and no framework banner, on successes and errors alike', async () => {
    for (const [method, target] of [
      ['GET', '/health'],
      ['GET', '/users/abc'],
      ['GET', '/nope'],
      ['GET', '/private'],
      ['GET', '/logo.png'],
    ]) {
      const reply = await call(t.url, method, target);
      expect(reply.headers['x-powered-by']).toBeUndefined();
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['x-frame-options']).toBeDefined();
      expect(reply.headers['strict-transport-security']).toBeDefined();
    }
  });
});

describe('the container', () => {
  it('runs as a numeric non-root user, in the image and in Kubernetes', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((match) => match[1]);
    const runtimeUser = users.at(-1);
    expect(runtimeUser).toMatch(/^[1-9][0-9]*$/);
    const deployment = readFileSync(path.join(ROOT, 'k8s', 'base', 'deployment.yaml'), 'utf8');
    expect(deployment).toMatch(/runAsNonRoot: true/);
    expect(deployment).not.toMatch(/runAsUser: 0\b/);
    expect(deployment).toMatch(/allowPrivilegeEscalation: false/);
  });
});
