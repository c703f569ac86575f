// Load for the failover test that records what readers saw: workers send reads by id, PATCHes
// with If-Match (from the version the worker last saw), PATCHes without it and now and then a
// DELETE, on a few users, every name written unique. Each call is recorded with its call and
// return times (one monotonic clock), so that each user's history can be checked for
// linearizability (test/support/history/). A write answered 5xx, timed out or cut off is
// indeterminate; a read that failed so says nothing and is left out.
import { performance } from 'node:perf_hooks';
import type { UserInput, UserOperation, UserOutput } from '../support/history/user-model.js';

export interface HistoryLoadOptions {
  baseUrl: string;
  /** The users, created before the load, with their names at version 1. */
  users: { id: number; name: string }[];
  /** Prefix of every name written, unique per run. */
  prefix: string;
  workers?: number;
  attemptTimeoutMs?: number;
  /** Hard stop for the whole load, whatever the test waits for. */
  maxLoadMs?: number;
  /** Users that are never deleted (the first ones), so that writes go on to the end. */
  keep?: number;
}

export interface HistoryFigures {
  operations: number;
  reads: number;
  writes: number;
  indeterminate: number;
  /** Answers no operation may get (a 400, a 409, …): the test fails on any. */
  unexpected: string[];
}

const nextTick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function startHistoryLoad({
  baseUrl,
  users,
  prefix,
  workers = 4,
  attemptTimeoutMs = 10_000,
  maxLoadMs = 150_000,
  keep = 3,
}: HistoryLoadOptions) {
  const histories = new Map<number, UserOperation[]>(users.map(({ id }) => [id, []]));
  const unexpected: string[] = [];
  const started = Date.now();
  let stopping = false;
  let written = 0;
  const running = () => !stopping && Date.now() - started < maxLoadMs;

  /** Sends one operation and records it; returns its output (undefined: unknown). */
  const call = async (
    client: string,
    id: number,
    input: UserInput,
  ): Promise<UserOutput | undefined> => {
    const init: RequestInit = { signal: AbortSignal.timeout(attemptTimeoutMs) };
    if (input.f === 'write' || input.f === 'cas') {
      init.method = 'PATCH';
      init.headers = {
        'content-type': 'application/json',
        ...(input.f === 'cas' && { 'if-match': `"${id}.${input.version}"` }),
      };
      init.body = JSON.stringify({ name: input.name });
    } else if (input.f === 'delete') {
      init.method = 'DELETE';
    }
    const callAt = performance.now();
    let output: UserOutput | undefined;
    try {
      const response = await fetch(`${baseUrl}/users/${id}`, init);
      const body = (await response.json().catch(() => undefined)) as { name?: string } | undefined;
      output = outputOf(response.status, body?.name, response.headers.get('etag'));
      if (!output && response.status < 500) {
        unexpected.push(`${input.f} of user ${id}: ${response.status} ${JSON.stringify(body)}`);
      }
    } catch {
      output = undefined; // timed out or cut off: unknown
    }
    const returnAt = performance.now();
    if (output || input.f !== 'read') {
      histories.get(id)!.push({ client, input, output, callAt, returnAt });
    }
    return output;
  };

  const worker = async (w: number) => {
    const seen = new Map<number, number>(users.map(({ id }) => [id, 1]));
    let backoff = 0;
    for (let i = 0; running(); i++) {
      const index = Math.floor(Math.random() * users.length);
      const { id } = users[index];
      const dice = Math.random();
      const name = `${prefix}-patch-w${w}-${i}`;
      let input: UserInput;
      if (dice < 0.45) input = { f: 'read' };
      else if (dice < 0.7) input = { f: 'cas', version: seen.get(id)!, name };
      else if (dice < 0.99 || index < keep) input = { f: 'write', name };
      else input = { f: 'delete' };
      if (input.f !== 'read') written++;
      const output = await call(`w${w}`, id, input);
      if (output?.status === 200) seen.set(id, output.version);
      // As a client's retry policy does: after an unknown outcome, back off (50 ms doubling to
      // 1 s) rather than spin on instant 503s. It also keeps the writes of unknown outcome, each
      // of which the checker must try both ways, to a few per user.
      backoff = output ? 0 : Math.min(1000, backoff * 2 || 50);
      if (backoff) await nextTick(backoff);
    }
  };
  const done = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));

  return {
    histories,
    async stop() {
      stopping = true;
      await done;
    },
    /** One read of each user after the load, so that a lost write shows in every history. */
    async finalReads(): Promise<void> {
      for (const { id } of users) {
        let output: UserOutput | undefined;
        for (let attempt = 0; !output && attempt < 20; attempt++) {
          output = await call('final', id, { f: 'read' });
          if (!output) await nextTick(250);
        }
        if (!output) throw new Error(`user ${id} could not be read after the failover`);
      }
    },
    figures(): HistoryFigures {
      const all = [...histories.values()].flat();
      return {
        operations: all.length,
        reads: all.filter((op) => op.input.f === 'read').length,
        writes: written,
        indeterminate: all.filter((op) => op.output === undefined).length,
        unexpected,
      };
    },
  };
}

/** What an answer says, or undefined when it says nothing certain (5xx) or is not one of ours. */
function outputOf(
  status: number,
  name: string | undefined,
  etag: string | null,
): UserOutput | undefined {
  if (status === 200) {
    const version = Number(/^"\d+\.(\d+)"$/.exec(etag ?? '')?.[1]);
    return name !== undefined && version > 0 ? { status, name, version } : undefined;
  }
  if (status === 204 || status === 404 || status === 412) return { status };
  return undefined;
}
