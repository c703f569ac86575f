// The soak's load: an open loop at a fixed rate (requests start on schedule, whatever the
// latency), a fixed mix of HTTP reads and writes and gRPC GetUser, bounded by time and by the
// number of requests in flight. Outcomes and memory samples are kept per reporting interval.
import os from 'node:os';
import * as grpc from '@grpc/grpc-js';
import { getUser, usersClient } from '../lib/grpc-client.mjs';
import { requestJson } from '../lib/http-client.mjs';
import { random } from '../lib/measure.mjs';
import { memory } from './service.mjs';

/** Requests in flight beyond this count as errors (the service is not keeping up). */
const MAX_IN_FLIGHT = 2000;
const REQUEST_TIMEOUT_MS = 10_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** What happened during one reporting interval. */
export class Interval {
  constructor(startS) {
    this.startS = startS;
    this.count = 0;
    this.errors = {};
    this.http = [];
    this.grpc = [];
    this.heapMb = [];
    this.rssMb = [];
    /** The machine's 1-minute load average: above the core count, the numbers are noisy. */
    this.load = [];
  }

  get errorCount() {
    return Object.values(this.errors).reduce((sum, n) => sum + n, 0);
  }
}

/** The mix: [share, operation, expected status]; gRPC outcomes are strings ('grpc OK'). */
function operations(service, client, userIds, agent, next) {
  const http = (method, path, body) =>
    requestJson(service.url, method, path, body, { agent, timeoutMs: REQUEST_TIMEOUT_MS });
  const pick = () => userIds[Math.floor(next() * userIds.length)];
  const runTag = Date.now().toString(36);
  let created = 0;
  return [
    [40, () => http('GET', `/users/${pick()}`), 200],
    [
      15,
      async () => {
        const id = pick();
        const { code, reply } = await getUser(client, id, { deadlineMs: REQUEST_TIMEOUT_MS });
        if (code !== grpc.status.OK) return { status: `grpc ${grpc.status[code]}` };
        return { status: reply.id === id ? 'grpc OK' : 'grpc wrong user' };
      },
      'grpc OK',
    ],
    [
      10,
      () => http('GET', `/users?page=${1 + Math.floor(next() * 20)}&limit=20&sort=-createdAt`),
      200,
    ],
    [10, () => http('GET', `/users/${pick()}/posts`), 200],
    [
      10,
      async () => {
        const n = ++created;
        const result = await http('POST', '/users', {
          name: `Soak ${n}`,
          email: `soak-${runTag}-${n}@example.com`,
        });
        if (result.status === 201) userIds.push(result.body.id);
        return result;
      },
      201,
    ],
    [5, () => http('PATCH', `/users/${pick()}`, { name: `Renamed ${next()}` }), 200],
    [
      10,
      () => http('POST', `/users/${pick()}/posts`, { title: 'Soak post', body: 'x'.repeat(200) }),
      201,
    ],
  ];
}

/**
 * Runs the load for warm-up + duration at `rate` requests per second; `onInterval` gets each
 * interval once it is over. Resolves with every interval, the count sent and the time taken.
 */
export async function runLoad(service, userIds, { options, agent, onInterval }) {
  const next = random(20261122);
  const client = usersClient(service.grpcAddress);
  const mix = operations(service, client, userIds, agent, next);
  const totalShare = mix.reduce((sum, [share]) => sum + share, 0);
  const choose = () => {
    let r = next() * totalShare;
    for (const entry of mix) {
      r -= entry[0];
      if (r < 0) return entry;
    }
    return mix[0];
  };

  const intervals = [];
  const started = performance.now();
  const totalMs = (options.warmupS + options.durationS) * 1000;
  let sent = 0;
  let inFlight = 0;
  const pending = new Set();
  const lastIndex = Math.ceil(totalMs / 1000 / options.intervalS) - 1;
  const current = () => {
    const elapsedS = (performance.now() - started) / 1000;
    // Answers that arrive after the end count in the last interval.
    const index = Math.min(lastIndex, Math.floor(elapsedS / options.intervalS));
    while (intervals.length <= index)
      intervals.push(new Interval(intervals.length * options.intervalS));
    return intervals[index];
  };

  // Memory sampled twice a second: the lowest heap of a stretch of time is its floor (after GC).
  const sampler = setInterval(
    () =>
      void memory(service).then(({ rssMb, heapMb }) => {
        const interval = current();
        if (Number.isFinite(rssMb)) interval.rssMb.push(rssMb);
        if (Number.isFinite(heapMb)) interval.heapMb.push(heapMb);
        interval.load.push(os.loadavg()[0]);
      }),
    500,
  );
  let reported = 0;
  const reporter = setInterval(() => {
    const done = intervals.length - 1;
    while (reported < done) onInterval(intervals[reported++]);
  }, 250);

  while (performance.now() - started < totalMs) {
    const due = Math.floor(((performance.now() - started) / 1000) * options.rate);
    while (sent < due) {
      sent++;
      const interval = current();
      if (inFlight >= MAX_IN_FLIGHT) {
        interval.errors['overload (too many in flight)'] =
          (interval.errors['overload (too many in flight)'] ?? 0) + 1;
        continue;
      }
      const [, operation, expected] = choose();
      const begin = performance.now();
      inFlight++;
      const promise = operation().then(({ status }) => {
        inFlight--;
        const ms = performance.now() - begin;
        const at = current();
        at.count++;
        if (status === expected) (typeof status === 'string' ? at.grpc : at.http).push(ms);
        else {
          const key = String(status);
          at.errors[key] = (at.errors[key] ?? 0) + 1;
        }
      });
      pending.add(promise);
      void promise.finally(() => pending.delete(promise));
    }
    await sleep(5);
  }
  await Promise.all(pending);
  clearInterval(sampler);
  clearInterval(reporter);
  const finalMemory = await memory(service);
  const last = intervals.at(-1);
  last.rssMb.push(finalMemory.rssMb);
  last.heapMb.push(finalMemory.heapMb);
  while (reported < intervals.length) onInterval(intervals[reported++]);
  client.close();
  return { intervals, sent, durationS: (performance.now() - started) / 1000 };
}
