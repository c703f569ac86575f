import * as grpc from '@grpc/grpc-js';
import pg from 'pg';
import { getUser, usersClient } from '../../scripts/lib/grpc-client.mjs';
import { send } from '../../scripts/lib/http-client.mjs';
import { freePort, refusesConnections } from '../../scripts/lib/ports.mjs';
import {
  buildService,
  type ServiceProcess,
  startOnTestDatabase,
  startService,
  waitFor,
} from '../support/service-process.js';
import { testDatabaseUrl } from '../support/test-database.js';

/** A JSON request sent at once, on a connection of its own. */
const sendJson = (url: string, method = 'GET', path = '/', body?: object) =>
  send(url, {
    method,
    path,
    headers: { 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });

describe('the service process (e2e)', () => {
  beforeAll(() => buildService());

  describe('graceful shutdown on SIGTERM', () => {
    let service: ServiceProcess;
    let db: pg.Client;

    beforeAll(async () => {
      service = await startOnTestDatabase(
        {
          SHUTDOWN_DRAIN_MS: '300',
          SHUTDOWN_TIMEOUT_MS: '20000',
          DB_STATEMENT_TIMEOUT_MS: '60000',
        },
        { timeoutMs: 20_000 },
      );
      db = new pg.Client({ connectionString: testDatabaseUrl() });
      await db.connect();
    });
    afterAll(async () => {
      await db.query('ROLLBACK').catch(() => undefined);
      await db.query('TRUNCATE users, posts RESTART IDENTITY CASCADE');
      await db.end();
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
    });

    it('finishes every in-flight HTTP request and gRPC call, then exits 0', async () => {
      const created = await fetch(`${service.url}/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Ada' }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: number };
      const client = usersClient(service.grpcAddress);

      // Hold every query of the service on a table lock: the requests below stay in flight
      // until the test releases it.
      await db.query('BEGIN');
      await db.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const inFlight = [
        sendJson(service.url, 'GET', `/users/${id}`),
        sendJson(service.url, 'GET', '/users?limit=5'),
        sendJson(service.url, 'PATCH', `/users/${id}`, { role: 'staff' }),
      ];
      const calls = [1, 2].map(() => getUser(client, id, { deadlineMs: 30_000 }));
      // 3 HTTP requests and the 2 gRPC calls hold or wait for pool connections until the lock is
      // released (the one-row list needs no separate count): four statements at least, as calls
      // in flight together share one (BatchedLookup).
      await waitFor('four statements in flight', async () => {
        const metrics = await (await fetch(service.metricsUrl)).text();
        const gauge = (name: string) =>
          Number(new RegExp(`^${name} (\\d+)`, 'm').exec(metrics)?.[1]);
        const busy = gauge('db_pool_connections') - gauge('db_pool_idle_connections');
        return busy + gauge('db_pool_waiting_requests') >= 4;
      });

      service.child.kill('SIGTERM');
      // Readiness fails at once, while requests are still accepted during the drain...
      await waitFor(
        'readiness 503',
        async () => (await fetch(`${service.url}/health/ready`)).status === 503,
      );
      // ...then the server stops accepting, with the five requests still in flight.
      await waitFor('HTTP to stop accepting', () => refusesConnections(service.port));
      expect(service.child.exitCode).toBeNull();

      await db.query('COMMIT');
      const responses = await Promise.all(inFlight);
      expect(responses.map((res) => res.status)).toEqual([200, 200, 200]);
      expect(JSON.parse(responses[2].text).role).toBe('staff');
      expect(await Promise.all(calls)).toEqual([
        { code: grpc.status.OK, reply: { id, name: 'Ada' } },
        { code: grpc.status.OK, reply: { id, name: 'Ada' } },
      ]);
      client.close();

      expect(await service.exited).toEqual({ code: 0, signal: null });
      expect(service.output()).toContain('stopped');
    });
  });

  it('exits non-zero with a clear message when the database is down at boot', async () => {
    const closedPort = await freePort();
    const service = await startService({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/users_test`,
      DB_RETRY_ATTEMPTS: '1',
    });
    const { code } = await service.exited;
    expect(code).not.toBe(0);
    expect(service.output()).toContain('Unable to connect to the database');
    expect(service.output()).toContain('ECONNREFUSED');
  });

  it('refuses to start with an invalid variable, naming it', async () => {
    const service = await startService({
      DATABASE_URL: testDatabaseUrl(),
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
    });
    expect((await service.exited).code).toBe(1);
    expect(service.output()).toContain('PORT must be an integer number');
    expect(service.output()).toContain('LOG_LEVEL must be one of the following values');
  });

  it('refuses to start in production without DATABASE_URL', async () => {
    const service = await startService({ NODE_ENV: 'production' });
    expect((await service.exited).code).toBe(1);
    expect(service.output()).toContain('DATABASE_URL is required when NODE_ENV=production');
  });
});
