// Admission control on the real app with a small fixed limit: what is turned away, in which
// order, how it is answered, that probes are always answered, that a caller who left is never
// served, and that the metrics count it all. The figures (goodput, latency) are the benchmark's:
// `npm run bench -- --overload` (docs/overload.md).
import * as grpc from '@grpc/grpc-js';
import http from 'node:http';
import pg from 'pg';
import { AdmissionController } from '../../src/overload/admission.js';
import { grpcClients, healthCheck, listUserChanges } from '../../scripts/lib/grpc-client.mjs';
import { getUserOf, httpCall, until } from '../support/fault-load.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

/** Limit 10: the feed starts below 5 in flight, lists below 7, reads below 9, writes below 10. */
const LIMIT = 10;
const QUEUE_TIMEOUT_MS = 1500;
const OVERLOADED = { error: 'the service is over its capacity: retry after 1 s' };

describe('admission control (e2e, a fixed limit of 10)', () => {
  let t: TestApp;
  let admission: AdmissionController;
  let admin: pg.Client;
  let clients: ReturnType<typeof grpcClients>;
  const agent = new http.Agent({ keepAlive: true });

  beforeAll(async () => {
    t = await createTestApp({
      grpc: true,
      env: {
        OVERLOAD_MODE: 'fixed',
        OVERLOAD_MAX_IN_FLIGHT: String(LIMIT),
        OVERLOAD_MIN_IN_FLIGHT: '1',
        OVERLOAD_QUEUE_TIMEOUT_MS: String(QUEUE_TIMEOUT_MS),
        // Room for every admitted request and a readiness check beside them.
        DB_POOL_SIZE: '20',
        DB_STATEMENT_TIMEOUT_MS: '60000',
      },
    });
    admission = t.app.get(AdmissionController);
    admin = new pg.Client({ connectionString: t.config.database.url });
    await admin.connect();
    clients = grpcClients(t.grpcAddress);
  });

  // A failed assertion must not leave the lock behind for the next test.
  afterEach(async () => {
    await admin.query('ROLLBACK');
  });

  afterAll(async () => {
    clients?.close();
    agent.destroy();
    await admin?.end();
    await resetDatabase(t.dataSource);
    await t?.close();
  });

  const call = (method: string, target: string, body?: unknown, headers?: Record<string, string>) =>
    httpCall(t.url, agent, method, target, body, headers);
  const inFlight = (count: number) =>
    until(`${count} in flight`, () => admission.stats.inFlight === count);
  const queued = (count: number) =>
    until(`${count} queued`, () => admission.stats.queued === count);
  const scrape = async () => (await fetch(t.metricsUrl)).text();
  const rejected = (metrics: string, transport: string, workClass: string, reason: string) =>
    Number(
      new RegExp(
        `^overload_rejected_total\\{transport="${transport}",class="${workClass}",reason="${reason}"\\} (\\d+)$`,
        'm',
      ).exec(metrics)?.[1],
    );

  it('sheds the feed, then lists, then reads, then writes; answers probes; never serves a caller who left', async () => {
    const { id } = (await call('POST', '/users', { name: 'Ada' })).body as { id: number };
    const before = await scrape();
    // Every statement on users waits for this lock: admitted requests stay in flight.
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    const held = Array.from({ length: 7 }, () => call('GET', `/users/${id}`));
    await inFlight(7);

    // 7 in flight: the feed is turned away at once, over both transports.
    const feed = await new Promise<http.IncomingMessage>((resolve) =>
      http.get(`${t.url}/users/changes?wait=5`, resolve),
    );
    expect({ status: feed.statusCode, retryAfter: feed.headers['retry-after'] }).toEqual({
      status: 503,
      retryAfter: '1',
    });
    expect(feed.headers['x-request-id']).toEqual(expect.any(String));
    feed.resume();
    expect(await listUserChanges(clients.users, { page_token: '', page_size: 10 })).toEqual({
      code: grpc.status.UNAVAILABLE,
      details: OVERLOADED.error,
    });
    // A list waits (lists start below 7) until its caller's deadline passes: then 503, unserved.
    expect(
      await call('GET', '/users', undefined, { 'x-envoy-expected-rq-timeout-ms': '200' }),
    ).toEqual({ status: 503, body: OVERLOADED });
    // Reads still start below 9.
    held.push(call('GET', `/users/${id}`), call('GET', `/users/${id}`));
    await inFlight(9);
    // 9 in flight: a read waits, and is answered 503 once it has waited its bound...
    expect(await call('GET', `/users/${id}`)).toEqual({ status: 503, body: OVERLOADED });
    // ...while a write still starts.
    const write = call('POST', '/users', { name: 'Grace' });
    await inFlight(LIMIT);

    // Probes are never shed, and load alone does not make the instance unready.
    expect(await call('GET', '/health')).toEqual({ status: 200, body: { ok: true } });
    expect(await call('GET', '/health/ready')).toEqual({
      status: 200,
      body: { ok: true, database: 'up', shuttingDown: false },
    });
    expect(await healthCheck(clients.health, 'users.Users')).toBe('SERVING');

    // A write that waits, and whose caller leaves, is never started.
    const leaving = http.request(`${t.url}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    leaving.on('error', () => {});
    leaving.end(JSON.stringify({ name: 'Left' }));
    await queued(1);
    leaving.destroy();
    await queued(0);

    // A GetUser that waits is admitted, with a read, once the lock goes and slots free up.
    const grpcRead = getUserOf(clients, id);
    const httpRead = call('GET', `/users/${id}`);
    await queued(2);
    await admin.query('ROLLBACK');
    for (const result of await Promise.all(held)) expect(result.status).toBe(200);
    expect((await write).status).toBe(201);
    expect(await grpcRead).toEqual({ code: grpc.status.OK, reply: { id, name: 'Ada' } });
    expect((await httpRead).status).toBe(200);
    await until('nothing in flight', () => admission.stats.inFlight === 0);

    const { rows } = await admin.query(`SELECT name FROM users ORDER BY id`);
    expect(rows).toEqual([{ name: 'Ada' }, { name: 'Grace' }]);
    const after = await scrape();
    const moved = (transport: string, workClass: string, reason: string) =>
      rejected(after, transport, workClass, reason) -
      rejected(before, transport, workClass, reason);
    expect({
      httpFeed: moved('http', 'feed', 'limit'),
      grpcFeed: moved('grpc', 'feed', 'limit'),
      listDeadline: moved('http', 'list', 'deadline'),
      readTimeout: moved('http', 'read', 'queue_timeout'),
      writeGone: moved('http', 'write', 'client_gone'),
    }).toEqual({ httpFeed: 1, grpcFeed: 1, listDeadline: 1, readTimeout: 1, writeGone: 1 });
    // The HTTP request metrics, which the SLIs read, count them as their callers saw them.
    const shed = (metrics: string, method: string, status: string) =>
      Number(
        new RegExp(
          `^http_request_duration_seconds_count\\{method="${method}",route="/users/\\(shed\\)",status="${status}"\\} (\\d+)$`,
          'm',
        ).exec(metrics)?.[1] ?? 0,
      );
    const recorded = (method: string, status: string) =>
      shed(after, method, status) - shed(before, method, status);
    expect({ answered503: recorded('GET', '503'), left499: recorded('POST', '499') }).toEqual({
      answered503: 3,
      left499: 1,
    });
    expect(after).toMatch(/^overload_limit 10$/m);
    expect(after).toMatch(/^overload_queue_wait_seconds_count \d+$/m);
  });

  it('answers a gRPC call turned away UNAVAILABLE with grpc-retry-pushback-ms, and counts each turned-away call as its caller saw it', async () => {
    const { id } = (await call('POST', '/users', { name: 'Linus' })).body as { id: number };
    const before = await scrape();
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    const held = Array.from({ length: 9 }, () => call('GET', `/users/${id}`));
    await inFlight(9);
    const getUser = (options: grpc.CallOptions) =>
      new Promise<grpc.ServiceError>((resolve) =>
        clients.users.GetUser(
          { id },
          new grpc.Metadata(),
          options,
          (error: grpc.ServiceError | null) => resolve(error!),
        ),
      );
    // Waits in the queue, and its caller gives up before a slot is free.
    const expired = await getUser({ deadline: Date.now() + 300 });
    const refused = await getUser({});
    await admin.query('ROLLBACK');
    await Promise.all(held);
    expect({
      code: refused.code,
      details: refused.details,
      pushback: refused.metadata.get('grpc-retry-pushback-ms'),
    }).toEqual({ code: grpc.status.UNAVAILABLE, details: OVERLOADED.error, pushback: ['1000'] });
    expect(expired.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    // The gRPC server metrics, which the SLIs read, count both.
    const handled = (metrics: string, code: string) =>
      Number(
        new RegExp(
          `^grpc_server_handled_total\\{grpc_service="users.Users",grpc_method="GetUser",grpc_code="${code}"\\} (\\d+)$`,
          'm',
        ).exec(metrics)?.[1] ?? 0,
      );
    await until('both turned-away calls to be counted', async () => {
      const after = await scrape();
      return (
        handled(after, 'UNAVAILABLE') === handled(before, 'UNAVAILABLE') + 1 &&
        handled(after, 'DEADLINE_EXCEEDED') === handled(before, 'DEADLINE_EXCEEDED') + 1
      );
    });
  });
});
