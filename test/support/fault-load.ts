// The fault matrix (test/faults/fault-matrix-*.e2e-spec.ts): real PostgreSQL processes and real
// faults, each under concurrent traffic. This module is its traffic: workers that keep requests in
// flight, and the checks of what they got back.
// Every wait is for a condition, polled with a bound; nothing asserts on how long anything took.
// The bounds (BOUND_MS) only turn a hang into a failure instead of a stuck test.
import * as grpc from '@grpc/grpc-js';
import http from 'node:http';
import type { DataSource } from 'typeorm';
import {
  type CallResult,
  getUser,
  type GrpcClients,
  type User,
} from '../../scripts/lib/grpc-client.mjs';
import { requestJson } from '../../scripts/lib/http-client.mjs';
import { SERVICE_UNAVAILABLE } from './expected-errors.js';

/** The longest any awaited condition may take before the test fails (a hang, not a slow run). */
export const BOUND_MS = 30_000;

// ---------------------------------------------------------------------------------------------
// Helpers: polling, HTTP and gRPC clients

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every 20 ms until it holds; fails after BOUND_MS with `what`. */
export async function until(
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
export const httpCall = (
  base: string,
  agent: http.Agent,
  method: string,
  target: string,
  body?: unknown,
  headers?: Record<string, string>,
) => requestJson(base, method, target, body, { agent, timeoutMs: BOUND_MS, headers });

/** GetUser with its outcome: `{ code: OK, reply }` or `{ code, details }`. */
export const getUserOf = (clients: GrpcClients, id: number, deadlineMs = BOUND_MS) =>
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

export class Load {
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
export function assertOnlyUnavailable(outcomes: Outcome[]): void {
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
export function assertSuccessOrUnavailable(outcomes: Outcome[]): void {
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
export async function assertNoAcknowledgedWriteLost(
  dataSource: DataSource,
  load: Load,
): Promise<void> {
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
