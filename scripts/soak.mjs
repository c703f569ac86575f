// `npm run soak`: the built service under a bounded, fixed-rate load for a fixed time, mixed reads
// and writes over HTTP and gRPC, reporting errors, latency percentiles per interval and the
// service's memory (RSS and V8 heap) from start to end. Exits 1 on any error or on heap growth
// beyond --max-heap-growth-mb.
//
//   npm run soak                              300 s at 250 requests/s, a report every 10 s
//   npm run soak -- --duration 30             a quick run
//   options: --duration S --rate N --interval S --warmup S --users N --max-heap-growth-mb M
//            --skip-build
//
// Everything listens on 127.0.0.1. PostgreSQL is embedded (a throwaway cluster in a temp
// directory) unless SOAK_DATABASE_URL names a database whose name contains "soak" (its users and
// posts tables are emptied first).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import pg from 'pg';
import { buildIfNeeded, entry, root } from './build-if-needed.mjs';
import { cleanupOnExit } from './lib/cleanup.mjs';
import { startThrowawayPostgres } from './lib/embedded-pg.mjs';
import { freePorts } from './lib/ports.mjs';
import { percentile, random } from './lib/measure.mjs';

const log = (...args) => console.log(...args);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '300' },
    rate: { type: 'string', default: '250' },
    interval: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '10' },
    users: { type: 'string', default: '1000' },
    'max-heap-growth-mb': { type: 'string', default: '32' },
    'skip-build': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  log(
    readFileSync(import.meta.filename, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('//'))
      .map((line) => line.slice(3))
      .join('\n'),
  );
  process.exit(0);
}
const positive = (name) => {
  const n = Number(args[name]);
  if (!(Number.isFinite(n) && n > 0)) throw new Error(`--${name} must be a positive number`);
  return n;
};
const options = {
  durationS: positive('duration'),
  rate: positive('rate'),
  intervalS: positive('interval'),
  warmupS: Number(args.warmup) >= 0 ? Number(args.warmup) : 10,
  users: Math.round(positive('users')),
  maxHeapGrowthMb: positive('max-heap-growth-mb'),
};
/** Requests in flight beyond this count as errors (the service is not keeping up). */
const MAX_IN_FLIGHT = 2000;
const REQUEST_TIMEOUT_MS = 10_000;

// ---------------------------------------------------------------------------------------------
// Clean-up of whatever was started, on success, on error and on Ctrl-C.

const { cleanups, cleanup } = cleanupOnExit({ what: 'the soak', log });

// ---------------------------------------------------------------------------------------------
// PostgreSQL and the service

async function startDatabase() {
  const external = process.env.SOAK_DATABASE_URL;
  if (external) {
    const name = decodeURIComponent(new URL(external).pathname.slice(1));
    if (!name.includes('soak')) throw new Error('SOAK_DATABASE_URL: the name must contain "soak"');
    return external;
  }
  // This script's own signal handlers stop the service before PostgreSQL.
  const cluster = await startThrowawayPostgres({
    prefix: 'users-soak-pg-',
    database: 'soak',
    takeOverSignals: true,
  });
  cleanups.push(cluster.stop);
  log(`embedded PostgreSQL on 127.0.0.1:${cluster.port}`);
  return cluster.url;
}

async function startService(databaseUrl) {
  const [port, grpcPort] = await freePorts(2);
  const output = [];
  const child = spawn(process.execPath, [entry], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      GRPC_PORT: String(grpcPort),
      DATABASE_URL: databaseUrl,
      MIGRATE_ON_BOOT: 'true',
      LOG_LEVEL: 'warn',
      SHUTDOWN_DRAIN_MS: '0',
    },
  });
  const keep = (chunk) => {
    output.push(...chunk.toString().split('\n').filter(Boolean));
    output.splice(0, Math.max(0, output.length - 200));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exit;
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve((exit = { code, signal }))),
  );
  const stop = async () => {
    if (exit) return exit;
    child.kill('SIGTERM');
    const status = await Promise.race([exited, sleep(20_000)]);
    if (status) return status;
    child.kill('SIGKILL');
    return exited;
  };
  cleanups.push(stop);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exit)
      throw new Error(`the service exited (${JSON.stringify(exit)}):\n${output.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`the service is not ready:\n${output.join('\n')}`);
    const ready = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(1000) }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) break;
    await sleep(100);
  }
  log(`service ready: pid ${child.pid}, HTTP ${port}, gRPC ${grpcPort}`);
  return { pid: child.pid, base, grpcAddress: `127.0.0.1:${grpcPort}`, output, stop };
}

// ---------------------------------------------------------------------------------------------
// Clients

const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });

/** One HTTP request; resolves with the status (or an error name) and the parsed body. */
function httpRequest(base, method, target, body) {
  const { hostname, port } = new URL(base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: hostname,
        port,
        method,
        path: target,
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        headers: payload
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
          : {},
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => {
          let parsed;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = text;
          }
          resolve({ status: response.statusCode, body: parsed });
        });
        response.on('error', (error) => resolve({ status: error.code ?? 'response error' }));
      },
    );
    request.on('timeout', () =>
      request.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })),
    );
    request.on('error', (error) => resolve({ status: error.code ?? 'request error' }));
    request.end(payload);
  });
}

function grpcClient(address) {
  const definition = protoLoader.loadSync(path.join(root, 'proto', 'users.proto'), {
    keepCase: true,
    longs: Number,
    defaults: true,
  });
  const { users } = grpc.loadPackageDefinition(definition);
  return new users.Users(address, grpc.credentials.createInsecure());
}

function getUser(client, id) {
  return new Promise((resolve) =>
    client.GetUser({ id }, { deadline: Date.now() + REQUEST_TIMEOUT_MS }, (error, reply) =>
      resolve(
        error
          ? { status: `grpc ${grpc.status[error.code]}` }
          : { status: reply.id === id ? 'grpc OK' : 'grpc wrong user' },
      ),
    ),
  );
}

/** The service's memory: RSS from /proc, V8 heap from /metrics (prom-client default metrics). */
async function memory(service) {
  let rssMb = NaN;
  try {
    const status = readFileSync(`/proc/${service.pid}/status`, 'utf8');
    rssMb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
  } catch {
    // not Linux, or the process is gone
  }
  let heapMb = NaN;
  const metrics = await httpRequest(service.base, 'GET', '/metrics');
  if (metrics.status === 200 && typeof metrics.body === 'string') {
    const used = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics.body);
    if (used) heapMb = Number(used[1]) / 1024 / 1024;
  }
  return { rssMb, heapMb };
}

// ---------------------------------------------------------------------------------------------
// The load: an open loop at a fixed rate (requests start on schedule, whatever the latency)

class Interval {
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

async function runLoad(service, userIds) {
  const next = random(20261122);
  const client = grpcClient(service.grpcAddress);
  const pick = () => userIds[Math.floor(next() * userIds.length)];
  const runTag = Date.now().toString(36);
  let created = 0;
  // The mix: [share, operation, expected status].
  const mix = [
    [40, () => httpRequest(service.base, 'GET', `/users/${pick()}`), 200],
    [15, () => getUser(client, pick()), 'grpc OK'],
    [
      10,
      () =>
        httpRequest(
          service.base,
          'GET',
          `/users?page=${1 + Math.floor(next() * 20)}&limit=20&sort=-createdAt`,
        ),
      200,
    ],
    [10, () => httpRequest(service.base, 'GET', `/users/${pick()}/posts`), 200],
    [
      10,
      async () => {
        const n = ++created;
        const result = await httpRequest(service.base, 'POST', '/users', {
          name: `Soak ${n}`,
          email: `soak-${runTag}-${n}@example.com`,
        });
        if (result.status === 201) userIds.push(result.body.id);
        return result;
      },
      201,
    ],
    [
      5,
      () => httpRequest(service.base, 'PATCH', `/users/${pick()}`, { name: `Renamed ${next()}` }),
      200,
    ],
    [
      10,
      () =>
        httpRequest(service.base, 'POST', `/users/${pick()}/posts`, {
          title: 'Soak post',
          body: 'x'.repeat(200),
        }),
      201,
    ],
  ];
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
    while (reported < done) printInterval(intervals[reported++]);
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
  while (reported < intervals.length) printInterval(intervals[reported++]);
  client.close();
  return { intervals, sent, durationS: (performance.now() - started) / 1000 };
}

const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

function printInterval(interval) {
  const http = [...interval.http].sort((a, b) => a - b);
  const grpcMs = [...interval.grpc].sort((a, b) => a - b);
  const errors = interval.errorCount;
  const phase = interval.startS < options.warmupS ? ' (warm-up)' : '';
  log(
    [
      `${String(interval.startS).padStart(5)} s`,
      `${String(interval.count).padStart(6)} req`,
      `${fmt(interval.count / options.intervalS, 0).padStart(5)}/s`,
      `${String(errors).padStart(4)} err`,
      `HTTP p50 ${fmt(percentile(http, 50))} p99 ${fmt(percentile(http, 99))} max ${fmt(http.at(-1))} ms`,
      `gRPC p50 ${fmt(percentile(grpcMs, 50))} p99 ${fmt(percentile(grpcMs, 99))} ms`,
      `RSS ${fmt(Math.max(...interval.rssMb))} MB`,
      `heap ${fmt(Math.min(...interval.heapMb))}..${fmt(Math.max(...interval.heapMb))} MB`,
      `load ${fmt(Math.max(...interval.load), 2)}${phase}`,
    ].join('  '),
  );
  if (errors) log(`        errors: ${JSON.stringify(interval.errors)}`);
}

// ---------------------------------------------------------------------------------------------

async function seedUsers(service) {
  const ids = [];
  for (let start = 0; start < options.users; start += 20) {
    const batch = Array.from({ length: Math.min(20, options.users - start) }, (_, n) =>
      httpRequest(service.base, 'POST', '/users', { name: `Seed ${start + n}` }),
    );
    for (const result of await Promise.all(batch)) {
      if (result.status !== 201) throw new Error(`seeding failed: ${JSON.stringify(result)}`);
      ids.push(result.body.id);
    }
  }
  return ids;
}

async function emptyTables(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('TRUNCATE users, posts RESTART IDENTITY CASCADE');
  } catch (error) {
    // A fresh database: the service creates the tables when it starts (MIGRATE_ON_BOOT).
    if (error.code !== '42P01') throw error;
  } finally {
    await client.end();
  }
}

async function main() {
  if (!args['skip-build']) buildIfNeeded();
  log(
    `soak: ${options.rate} requests/s for ${options.durationS} s (after ${options.warmupS} s of ` +
      `warm-up), reports every ${options.intervalS} s`,
  );
  const databaseUrl = await startDatabase();
  if (process.env.SOAK_DATABASE_URL) await emptyTables(databaseUrl);
  const service = await startService(databaseUrl);
  const userIds = await seedUsers(service);
  log(`seeded ${userIds.length} users\n`);

  const { intervals, sent, durationS } = await runLoad(service, userIds);
  const measured = intervals.filter((interval) => interval.startS >= options.warmupS);
  const errors = intervals.reduce((sum, interval) => sum + interval.errorCount, 0);
  // Start and end: the first and the last fifth of the measured time (at least one interval
  // each). The heap is compared by its floor (the lowest sample, after a GC), RSS by its peak.
  const span = Math.max(1, Math.floor(measured.length / 5));
  const head = measured.length ? measured.slice(0, span) : intervals.slice(0, 1);
  const tail = measured.length ? measured.slice(-span) : intervals.slice(-1);
  const floor = (stretch) => Math.min(...stretch.flatMap((interval) => interval.heapMb));
  const peak = (stretch) => Math.max(...stretch.flatMap((interval) => interval.rssMb));
  const heapGrowthMb = floor(tail) - floor(head);
  const rssStart = peak(head);
  const rssEnd = peak(tail);
  const allHttp = measured.flatMap((interval) => interval.http).sort((a, b) => a - b);
  const allGrpc = measured.flatMap((interval) => interval.grpc).sort((a, b) => a - b);

  const exit = await service.stop();
  log('\nsummary');
  log(
    `  requests sent        ${sent} in ${fmt(durationS)} s, warm-up included (${fmt(sent / durationS)}/s)`,
  );
  log(`  errors               ${errors}`);
  log(
    `  HTTP latency         p50 ${fmt(percentile(allHttp, 50))}  p99 ${fmt(percentile(allHttp, 99))}  max ${fmt(allHttp.at(-1))} ms`,
  );
  log(
    `  gRPC latency         p50 ${fmt(percentile(allGrpc, 50))}  p99 ${fmt(percentile(allGrpc, 99))}  max ${fmt(allGrpc.at(-1))} ms`,
  );
  log(
    `  RSS peak             ${fmt(rssStart)} MB -> ${fmt(rssEnd)} MB (${fmt(rssEnd - rssStart)} MB)`,
  );
  log(`  (start and end: the first and last ${span * options.intervalS} s of the measured time)`);
  const loads = intervals.flatMap((interval) => interval.load);
  log(
    `  machine load         ${fmt(Math.min(...loads), 2)}..${fmt(Math.max(...loads), 2)} (1-min average, ${os.cpus().length} cores)`,
  );
  log(
    `  heap floor           ${fmt(floor(head))} MB -> ${fmt(floor(tail))} MB (${fmt(heapGrowthMb)} MB; limit ${options.maxHeapGrowthMb} MB)`,
  );
  log(`  service exit         ${JSON.stringify(exit)}`);

  const failures = [];
  if (errors > 0) failures.push(`${errors} errors`);
  if (heapGrowthMb > options.maxHeapGrowthMb) failures.push(`heap grew ${fmt(heapGrowthMb)} MB`);
  if (exit.code !== 0) failures.push(`the service exited ${JSON.stringify(exit)}`);
  if (failures.length) {
    log(`\nFAILED: ${failures.join(', ')}`);
    if (exit.code !== 0) log(service.output.slice(-20).join('\n'));
  } else {
    log('\nOK');
  }
  return failures.length ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  log(error);
} finally {
  agent.destroy();
  await cleanup();
}
process.exit(code);
