// Secrets and internals, on the built service: keys and the database password never reach its
// logs, on any path (success, 401, 500 with a stack trace in the log, gRPC with credentials in
// metadata); an unhandled failure (a real SQL error) answers {"error":"internal server error"} over
// HTTP and INTERNAL "internal error" over gRPC, with no stack trace, SQL or path, and the cause is
// logged.
import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { getUserRaw } from '../../scripts/lib/grpc-client.mjs';
import { INTERNAL_ERROR, INVALID_API_KEY } from '../support/expected-errors.js';
import { call, expectNothingInternal, getUserRequest } from '../support/raw-calls.js';
import {
  buildService,
  type ServiceProcess,
  startReadyService,
} from '../support/service-process.js';
import { testDatabaseUrl } from '../support/test-database.js';

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
    service = await startReadyService(
      {
        DATABASE_URL: serviceUrl,
        MIGRATE_ON_BOOT: 'true',
        API_KEYS: keys.join(','),
        LOG_LEVEL: 'trace',
        SHUTDOWN_DRAIN_MS: '0',
      },
      { timeoutMs: 20_000 },
    );
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
