// `npm run bench`: the production build of the service against a hand-written raw baseline
// (bench/baseline/), on the same seeded PostgreSQL, under the same load. See bench/README.md.
//
//   npm run bench                     full run: 100k users, 500k posts, 5 s warm-up + 20 s per endpoint
//   npm run bench -- --quick          smaller seed, shorter runs (under 3 minutes)
//   npm run bench -- --scale          list latency at concurrency 1 by table size and page depth
//   options: --duration S --warmup S --connections N --users N --posts N --skip-build
//            --only health,user,list,posts,grpc,create   --targets service,baseline,express
//            --cpu-prof (per-endpoint self time)   --sql-stats (pg_stat_statements per phase)
//            --explain (plans of the list query)   --wait-idle S   --sizes 100000,1000000 (--scale)
//
// Everything listens on 127.0.0.1 and every load loop is bounded in time and count. PostgreSQL is
// embedded (a throwaway cluster in a temp directory) unless BENCH_DATABASE_URL names a database
// whose name contains "bench" (the seed empties its users and posts tables).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { startThrowawayPostgres } from '../scripts/lib/embedded-pg.mjs';
import { freePorts } from '../scripts/lib/ports.mjs';
import { cleanupOnExit } from '../scripts/lib/cleanup.mjs';
import { random, Samples } from '../scripts/lib/measure.mjs';
import { runGrpcLoad } from './grpc-load.mjs';
import {
  assertBenchDatabase,
  BENCH_POST_ROLE,
  ROLE_SHARES,
  ROLES,
  seed,
  seedUsers,
  vacuumAnalyze,
  visibleShare,
} from './seed.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const SERVICE_ENTRY = path.join(ROOT, 'dist', 'src', 'main.js');
const BASELINE_ENTRY = path.join(ROOT, 'bench', 'baseline', 'http-server.mjs');
const EXPRESS_ENTRY = path.join(ROOT, 'bench', 'baseline', 'express-server.mjs');
const MAX_REQUESTS_PER_RUN = 5_000_000;
const log = (...args) => console.error(...args);

// ---------------------------------------------------------------------------------------------
// Options

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    scale: { type: 'boolean', default: false },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string' },
    targets: { type: 'string', default: 'service,baseline,express' },
    users: { type: 'string' },
    posts: { type: 'string' },
    sizes: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'sql-stats': { type: 'boolean', default: false },
    explain: { type: 'boolean', default: false },
    'skip-build': { type: 'boolean', default: false },
    'wait-idle': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  console.log(
    (await readFile(import.meta.filename, 'utf8'))
      .split('\n')
      .filter((line) => line.startsWith('//'))
      .slice(0, 14)
      .map((line) => line.slice(3))
      .join('\n'),
  );
  process.exit(0);
}

const positive = (value, name) => {
  const n = Number(value);
  if (!(Number.isFinite(n) && n > 0)) throw new Error(`--${name} must be a positive number`);
  return n;
};
const options = {
  durationS: positive(args.duration ?? (args.quick ? 5 : 20), 'duration'),
  warmupS: args.warmup === undefined ? (args.quick ? 2 : 5) : Number(args.warmup),
  connections: Math.round(positive(args.connections, 'connections')),
  users: Math.round(positive(args.users ?? (args.quick ? 20_000 : 100_000), 'users')),
  posts: Math.round(Number(args.posts ?? (args.quick ? 100_000 : 500_000))),
  targets: args.targets.split(',').filter(Boolean),
  only: args.only?.split(',').filter(Boolean),
};
for (const target of options.targets) {
  if (!['service', 'baseline', 'express'].includes(target))
    throw new Error(`unknown --targets entry ${target}`);
}
const ENDPOINT_KEYS = ['health', 'user', 'list', 'posts', 'grpc', 'create'];
for (const key of options.only ?? []) {
  if (!ENDPOINT_KEYS.includes(key)) {
    throw new Error(`unknown --only entry ${key} (one of ${ENDPOINT_KEYS.join(', ')})`);
  }
}

// ---------------------------------------------------------------------------------------------
// Clean-up: whatever was started is stopped on success, on error and on SIGINT/SIGTERM/SIGHUP,
// in reverse order (load, then the servers, then PostgreSQL).

const { cleanups, cleanup } = cleanupOnExit({
  what: 'the benchmark',
  log,
  signals: [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ],
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Clock ticks per second of /proc CPU times (USER_HZ). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function readProcesses() {
  const processes = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      processes.set(Number(name), {
        ppid: Number(fields[1]),
        cpu: Number(fields[11]) + Number(fields[12]),
      });
    } catch {
      // the process exited while we looked
    }
  }
  return processes;
}

function subtree(processes, root) {
  const pids = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, { ppid }] of processes) {
      if (!pids.has(pid) && pids.has(ppid)) {
        pids.add(pid);
        grew = true;
      }
    }
  }
  let ticks = 0;
  for (const pid of pids) ticks += processes.get(pid)?.cpu ?? 0;
  return ticks;
}

/**
 * CPU times (clock ticks) of the whole machine and of what the benchmark runs: the process under
 * test, this process (the load generator) and the rest of its descendants (PostgreSQL, embedded).
 */
function cpuSnapshot(targetPid) {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7];
    const processes = readProcesses();
    const ours = subtree(processes, process.pid);
    const target = targetPid ? subtree(processes, targetPid) : 0;
    const self = processes.get(process.pid)?.cpu ?? 0;
    return {
      busy,
      total: busy + fields[3] + fields[4],
      ours,
      target,
      self,
      postgres: ours - target - self,
    };
  } catch {
    return undefined;
  }
}

/**
 * Percent of all cores used by processes the benchmark did not start (other jobs sharing the
 * machine) between two snapshots: a high figure means a noisy run.
 */
function foreignCpu(before, after) {
  if (!before || !after || after.total <= before.total) return NaN;
  const foreign = after.busy - before.busy - (after.ours - before.ours);
  return Math.max(0, (100 * foreign) / (after.total - before.total));
}

/** CPU microseconds per answered request of the app, PostgreSQL and the load generator. */
function cpuPerRequest(before, after, requests) {
  if (!before || !after || requests === 0) return undefined;
  const us = (key) => Math.max(0, ((after[key] - before[key]) * 1e6) / CLOCK_TICKS / requests);
  return { app: us('target'), postgres: us('postgres'), load: us('self') };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/** Settings for a disposable benchmark cluster: durability off, enough memory, no JIT. */
function postgresFlags({ sqlStats }) {
  const settings = {
    fsync: 'off',
    full_page_writes: 'off',
    shared_buffers: '512MB',
    effective_cache_size: '4GB',
    work_mem: '16MB',
    maintenance_work_mem: '256MB',
    max_wal_size: '4GB',
    checkpoint_timeout: '30min',
    random_page_cost: '1.1',
    // OLTP queries gain nothing from JIT, and it would add tens of ms to the 1M-row counts.
    jit: 'off',
    max_connections: '100',
    ...(sqlStats
      ? {
          shared_preload_libraries: 'pg_stat_statements',
          'pg_stat_statements.track_planning': 'on',
        }
      : {}),
  };
  return Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
}

/** Starts a throwaway cluster in a fresh temp directory; returns its URL and a stop function. */
async function startEmbeddedPostgres({ sqlStats }) {
  const started = performance.now();
  // This script's own signal handlers stop the service and baseline before PostgreSQL.
  const cluster = await startThrowawayPostgres({
    prefix: 'users-bench-pg-',
    database: 'bench',
    postgresFlags: postgresFlags({ sqlStats }),
    takeOverSignals: true,
  });
  cleanups.push(cluster.stop);
  log(
    `embedded PostgreSQL on 127.0.0.1:${cluster.port} (${cluster.dir}), up in ${secs(started)} s`,
  );
  return cluster;
}

async function connect(url) {
  const client = new pg.Client({ connectionString: url, application_name: 'bench-orchestrator' });
  await client.connect();
  return client;
}

// ---------------------------------------------------------------------------------------------
// Processes under test

/** The .cpuprofile each profiled target writes when it exits (--cpu-prof). */
const profileFiles = {};

/**
 * Starts the service (`node dist/src/main.js`), the baseline or the Express ceiling and waits until GET /health/ready
 * answers 200. Output is kept (the last lines) for the error message if it dies.
 */
async function startTarget(kind, { url, extraEnv = {}, cpuProf = false }) {
  // Reserved together so the two can never be the same port.
  const [port, grpcPort] = await freePorts(2);
  const entry = { service: SERVICE_ENTRY, baseline: BASELINE_ENTRY, express: EXPRESS_ENTRY }[kind];
  const flags = [];
  if (cpuProf) {
    await mkdir(path.join(RESULTS, 'profiles'), { recursive: true });
    profileFiles[kind] = path.join(RESULTS, 'profiles', `${kind}-${Date.now()}.cpuprofile`);
    flags.push(
      '--cpu-prof',
      `--cpu-prof-dir=${path.join(RESULTS, 'profiles')}`,
      `--cpu-prof-name=${path.basename(profileFiles[kind])}`,
    );
  }
  const child = spawn(process.execPath, [...flags, entry], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      // Both the service and the baseline listen on loopback only.
      HOST: '127.0.0.1',
      DATABASE_URL: url,
      PORT: String(port),
      GRPC_PORT: String(grpcPort),
      LOG_LEVEL: 'warn',
      MIGRATE_ON_BOOT: 'false',
      API_KEYS: 'bench-key',
      SHUTDOWN_DRAIN_MS: '0',
      DB_POOL_SIZE: '10',
      ...extraEnv,
    },
  });
  const output = [];
  const keep = (chunk) => {
    output.push(...chunk.toString().split('\n').filter(Boolean));
    output.splice(0, Math.max(0, output.length - 40));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const done = await Promise.race([exited, sleep(10_000).then(() => undefined)]);
      if (!done) {
        child.kill('SIGKILL');
        await exited;
      }
    }
  };
  cleanups.push(stop);

  const base = `http://127.0.0.1:${port}`;
  const started = performance.now();
  let dead;
  exited.then((status) => (dead = status));
  for (;;) {
    if (dead) {
      throw new Error(
        `${kind} exited (${dead.code ?? dead.signal}) before it was ready:\n  ${output.join('\n  ')}`,
      );
    }
    if (performance.now() - started > 60_000) {
      await stop();
      throw new Error(`${kind} not ready after 60 s:\n  ${output.join('\n  ')}`);
    }
    const ready = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(1000) }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) break;
    await sleep(100);
  }
  log(`${kind} ready in ${secs(started)} s (HTTP ${port}, gRPC ${grpcPort}, pid ${child.pid})`);
  return {
    kind,
    base,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    pid: child.pid,
    output,
    alive: () => child.exitCode === null && child.signalCode === null,
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// Load

/** The measured endpoints, in the order they run (writes last: they grow the users table). */
function endpoints({ users }) {
  let created = 0;
  const runTag = Date.now().toString(36);
  return [
    { key: 'health', name: 'GET /health', path: () => '/health' },
    {
      key: 'user',
      name: 'GET /users/:id',
      path: (next) => `/users/${1 + Math.floor(next() * users)}`,
    },
    {
      key: 'list',
      name: 'GET /users?role=…&sort=-createdAt&limit=20',
      path: (next) =>
        `/users?role=${ROLES[Math.floor(next() * ROLES.length)]}&sort=-createdAt&limit=20`,
    },
    {
      key: 'posts',
      name: 'GET /users/:id/posts',
      path: (next) => `/users/${1 + Math.floor(next() * users)}/posts`,
    },
    { key: 'grpc', name: 'gRPC GetUser', grpc: true },
    {
      key: 'create',
      name: 'POST /users',
      method: 'POST',
      path: () => '/users',
      // A unique email per request (no 409s), and a role the list endpoint never asks for.
      body: () => {
        const n = ++created;
        return JSON.stringify({
          name: `Bench User ${n}`,
          email: `bench-${runTag}-${n}@example.com`,
          role: BENCH_POST_ROLE,
        });
      },
    },
  ];
}

/** One autocannon run; latencies of 2xx answers are kept at full resolution. */
async function httpLoad(target, endpoint, { durationS, connections, seed }) {
  const next = random(seed);
  const samples = new Samples();
  let non2xx = 0;
  const statuses = {};
  const instance = autocannon({
    url: target.base,
    connections,
    duration: durationS,
    timeout: 10,
    requests: [
      {
        method: endpoint.method ?? 'GET',
        headers: endpoint.body ? { 'content-type': 'application/json' } : {},
        setupRequest: (request) => {
          request.path = endpoint.path(next);
          if (endpoint.body) request.body = endpoint.body();
          return request;
        },
      },
    ],
  });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) samples.add(responseTime);
    else {
      non2xx++;
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    }
    if (samples.length + non2xx >= MAX_REQUESTS_PER_RUN) instance.stop();
  });
  const started = performance.now();
  const result = await instance;
  const measuredS = (performance.now() - started) / 1000;
  const [p50Ms, p90Ms, p99Ms, maxMs] = samples.percentiles(50, 90, 99, 100);
  return {
    count: samples.length,
    rps: samples.length / measuredS,
    p50Ms,
    p90Ms,
    p99Ms,
    maxMs,
    errors: non2xx + result.errors + result.mismatches,
    detail: { statuses, connectionErrors: result.errors, timeouts: result.timeouts },
  };
}

async function load(target, endpoint, { durationS, connections, users, seed }) {
  if (endpoint.grpc) {
    const result = await runGrpcLoad({
      address: target.grpcAddress,
      connections,
      durationMs: durationS * 1000,
      maxCalls: MAX_REQUESTS_PER_RUN,
      maxId: users,
      seed,
    });
    return { ...result, detail: { errorCodes: result.errorCodes } };
  }
  return httpLoad(target, endpoint, { durationS, connections, seed });
}

/** Waits (at most `maxS` seconds) until other jobs use under 10% of the CPU for a second. */
async function waitIdle(maxS) {
  const end = performance.now() + maxS * 1000;
  let busy = NaN;
  while (performance.now() < end) {
    const before = cpuSnapshot();
    await sleep(1000);
    busy = foreignCpu(before, cpuSnapshot());
    if (!(busy >= 10)) return;
  }
  log(`  (other jobs still use ${fmt(busy, 0)}% CPU after waiting ${maxS} s; measuring anyway)`);
}

/** Warm-up then measurement of every endpoint against one running target. */
async function measureTarget(target, list) {
  const results = {};
  for (const endpoint of list) {
    const common = { connections: options.connections, users: options.users, seed: 7 };
    if (args['wait-idle']) await waitIdle(Number(args['wait-idle']));
    if (options.warmupS > 0) {
      await load(target, endpoint, { ...common, durationS: options.warmupS });
    }
    const before = cpuSnapshot(target.pid);
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    const result = await load(target, endpoint, { ...common, durationS: options.durationS });
    result.window = [fromUs, Number(process.hrtime.bigint() / 1000n)];
    const after = cpuSnapshot(target.pid);
    result.otherCpuPct = foreignCpu(before, after);
    result.cpuUs = cpuPerRequest(before, after, result.count);
    if (!target.alive()) {
      const signalled = target.output.some((line) => /SIGTERM|SIGINT/.test(line));
      throw new Error(
        `${target.kind} died during ${endpoint.name}` +
          (signalled ? ' (it received a signal this benchmark did not send)' : '') +
          `:\n  ${target.output.join('\n  ')}`,
      );
    }
    results[endpoint.key] = result;
    log(
      `  ${target.kind.padEnd(8)} ${endpoint.name.padEnd(44)} ${fmt(result.rps, 0).padStart(7)} req/s` +
        `  p50 ${fmt(result.p50Ms, 2)} ms  p99 ${fmt(result.p99Ms, 2)} ms  errors ${result.errors}` +
        `  other CPU ${fmt(result.otherCpuPct, 0)}%` +
        (result.cpuUs
          ? `  CPU µs/req app ${fmt(result.cpuUs.app, 0)} pg ${fmt(result.cpuUs.postgres, 0)} load ${fmt(result.cpuUs.load, 0)}`
          : '') +
        (result.errors ? ` ${JSON.stringify(result.detail)}` : ''),
    );
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Response parity: the baseline must answer like the service (bodies, list and POST headers).

const PROBES = [
  '/health',
  '/users/1',
  '/users/10', // every tenth seeded user has no email: the field must be omitted
  '/users?role=editor&sort=-createdAt&limit=20',
  '/users?role=admin&sort=-createdAt&limit=5&page=3',
  '/users?role=member&sort=name,-id&limit=3',
  '/users/7/posts',
  '/users/7/posts?sort=-createdAt&limit=2',
  '/users/2147483647',
  '/users/2147483647/posts',
  '/users/abc',
  '/users?limit=0',
];
const COMPARED_HEADERS = ['content-type', 'x-total-count', 'link', 'location'];

async function probe(target) {
  const answers = {};
  for (const probePath of PROBES) {
    const response = await fetch(target.base + probePath);
    answers[`GET ${probePath}`] = {
      status: response.status,
      headers: Object.fromEntries(COMPARED_HEADERS.map((h) => [h, response.headers.get(h)])),
      hasRequestId: response.headers.has('x-request-id'),
      body: await response.json(),
    };
  }
  const response = await fetch(`${target.base}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      name: '  Parity Probe  ',
      email: `parity-${target.kind}@example.com`,
      role: BENCH_POST_ROLE,
    }),
  });
  const created = await response.json();
  answers['POST /users'] = {
    status: response.status,
    location: response.headers.get('location') === `/users/${created.id}`,
    hasRequestId: response.headers.has('x-request-id'),
    keys: Object.keys(created).join(','),
    name: created.name,
  };
  return answers;
}

/** Differences between two probe sets; error messages may differ (free text), shapes may not. */
function compareProbes(service, baseline, kind = 'baseline') {
  const problems = [];
  for (const [name, expected] of Object.entries(service)) {
    const actual = baseline[name];
    const comparable = (answer) =>
      JSON.stringify(
        answer.status >= 400
          ? { status: answer.status, errorIsString: typeof answer.body?.error === 'string' }
          : answer,
      );
    if (comparable(expected) !== comparable(actual)) {
      problems.push(`${name}: service ${comparable(expected)} vs ${kind} ${comparable(actual)}`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Reporting

const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const secs = (since) => ((performance.now() - since) / 1000).toFixed(1);
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : null);

function targetCheck(entry) {
  if (entry.name.startsWith('gRPC')) {
    const p99Ratio = ratio(entry.p99Ms, entry.baselineP99Ms);
    return entry.ratio >= 0.8 && p99Ratio !== null && p99Ratio <= 1.25 && entry.errors === 0
      ? 'pass (≥0.8×, p99 ≤1.25×)'
      : 'FAIL (≥0.8×, p99 ≤1.25×)';
  }
  if (entry.name === 'GET /health') return entry.errors === 0 ? 'floor' : 'FAIL (errors)';
  if (entry.name.startsWith('POST')) return entry.errors === 0 ? 'no errors' : 'FAIL (errors)';
  return entry.ratio >= 0.6 && entry.p99Ms < 20 && entry.errors === 0
    ? 'pass (≥0.6×, p99 <20 ms)'
    : 'FAIL (≥0.6×, p99 <20 ms)';
}

function table(headers, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

function report(list, results) {
  const entries = list
    .filter((endpoint) => results.service?.[endpoint.key] ?? results.baseline?.[endpoint.key])
    .map((endpoint) => {
      const service = results.service?.[endpoint.key] ?? {};
      const baseline = results.baseline?.[endpoint.key] ?? {};
      const bare = endpoint.key === 'grpc' ? {} : (results.express?.[endpoint.key] ?? {});
      const entry = {
        name: endpoint.name,
        rps: round(service.rps, 1),
        baselineRps: round(baseline.rps, 1),
        ratio: round(ratio(service.rps, baseline.rps), 3),
        p50Ms: round(service.p50Ms, 3),
        p99Ms: round(service.p99Ms, 3),
        errors: service.errors ?? null,
        baselineP50Ms: round(baseline.p50Ms, 3),
        baselineP99Ms: round(baseline.p99Ms, 3),
        baselineErrors: baseline.errors ?? null,
        // The Express 5 ceiling (bench/baseline/express-server.mjs): HTTP only.
        expressRps: round(bare.rps, 1),
        expressRatio: round(ratio(bare.rps, baseline.rps), 3),
        expressP99Ms: round(bare.p99Ms, 3),
      };
      // Shown in the table, not stored: CPU taken by other jobs during each run.
      return Object.defineProperties(entry, {
        otherCpuPct: { value: service.otherCpuPct, enumerable: false },
        baselineOtherCpuPct: { value: baseline.otherCpuPct, enumerable: false },
      });
    });
  const x = (a, b) => {
    const r = ratio(a, b);
    return r === null ? '–' : `${r.toFixed(2)}×`;
  };
  const markdown = table(
    [
      'endpoint',
      'req/s',
      'baseline req/s',
      'ratio',
      'p50 ms (baseline)',
      'p50 ×',
      'p99 ms (baseline)',
      'p99 ×',
      'errors (baseline)',
      'other CPU % (baseline)',
      'Express 5 ceiling req/s (ratio, p99 ms)',
      'target',
    ],
    entries.map((e) => [
      `\`${e.name}\``,
      fmt(e.rps, 0),
      fmt(e.baselineRps, 0),
      e.ratio === null ? '–' : `**${e.ratio.toFixed(2)}×**`,
      `${fmt(e.p50Ms, 2)} (${fmt(e.baselineP50Ms, 2)})`,
      x(e.p50Ms, e.baselineP50Ms),
      `${fmt(e.p99Ms, 2)} (${fmt(e.baselineP99Ms, 2)})`,
      x(e.p99Ms, e.baselineP99Ms),
      `${e.errors ?? '–'} (${e.baselineErrors ?? '–'})`,
      `${fmt(e.otherCpuPct, 0)} (${fmt(e.baselineOtherCpuPct, 0)})`,
      e.expressRps === null
        ? '–'
        : `${fmt(e.expressRps, 0)} (${e.expressRatio === null ? '–' : `${e.expressRatio.toFixed(2)}×`}, ${fmt(e.expressP99Ms, 1)})`,
      e.ratio === null ? '–' : targetCheck(e),
    ]),
  );
  const cpu = (kind, key, part) => results[kind]?.[key]?.cpuUs?.[part];
  const cpuMarkdown = table(
    [
      'endpoint',
      'app CPU µs/req',
      'baseline app',
      'app ×',
      'PostgreSQL µs/req (baseline)',
      'load generator µs/req (baseline)',
    ],
    list
      .filter((e) => results.service?.[e.key] ?? results.baseline?.[e.key])
      .map((e) => [
        `\`${e.name}\``,
        fmt(cpu('service', e.key, 'app'), 0),
        fmt(cpu('baseline', e.key, 'app'), 0),
        x(cpu('service', e.key, 'app'), cpu('baseline', e.key, 'app')),
        `${fmt(cpu('service', e.key, 'postgres'), 0)} (${fmt(cpu('baseline', e.key, 'postgres'), 0)})`,
        `${fmt(cpu('service', e.key, 'load'), 0)} (${fmt(cpu('baseline', e.key, 'load'), 0)})`,
      ]),
  );
  return { entries, markdown, cpuMarkdown };
}

const round = (n, digits) =>
  Number.isFinite(n) ? Math.round(n * 10 ** digits) / 10 ** digits : null;

/** pg_stat_statements for one phase: what SQL each request really cost (calls, mean ms). */
async function sqlStats(client, label) {
  const { rows } = await client.query(
    `SELECT calls, round(mean_plan_time::numeric, 3) AS plan_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
            round(total_exec_time::numeric) AS total_ms, round(rows::numeric / calls, 1) AS rows_per_call,
            round((shared_blks_hit + shared_blks_read)::numeric / calls, 1) AS blocks_per_call,
            regexp_replace(query, '\\s+', ' ', 'g') AS query
     FROM pg_stat_statements
     WHERE query !~* 'pg_stat_statements|^(VACUUM|DELETE FROM users WHERE role)' AND calls > 100
     ORDER BY total_exec_time DESC LIMIT 12`,
  );
  await client.query('SELECT pg_stat_statements_reset()');
  console.log(`\nSQL of the ${label} phase (pg_stat_statements, calls > 100):\n`);
  console.log(
    table(
      ['calls', 'plan ms', 'exec ms', 'total exec ms', 'rows/call', 'blocks/call', 'query'],
      rows.map((r) => [
        r.calls,
        r.plan_ms,
        r.mean_ms,
        r.total_ms,
        r.rows_per_call,
        r.blocks_per_call,
        `\`${r.query.slice(0, 140)}\``,
      ]),
    ),
  );
}

/** EXPLAIN ANALYZE of the list page and of its COUNT, as the service sends them. */
async function explain(client, role = 'member') {
  const list =
    'SELECT "user"."id" AS "user_id", "user"."name" AS "user_name", "user"."email" AS "user_email", ' +
    '"user"."role" AS "user_role", "user"."created_at" AS "user_created_at", "user"."updated_at" AS "user_updated_at" ' +
    'FROM "users" "user" WHERE "user"."role" = $1 ORDER BY "user"."created_at" DESC, "user"."id" ASC';
  const count = 'SELECT COUNT(1) AS "cnt" FROM "users" "user" WHERE "user"."role" = $1';
  const plans = [
    [`list, page 1 (role=${role})`, `${list} LIMIT 20 OFFSET 0`, [role]],
    [`list, page 500 (role=${role})`, `${list} LIMIT 20 OFFSET 9980`, [role]],
    [`count (role=${role})`, count, [role]],
    ['count (role=admin)', count, ['admin']],
  ];
  for (const [label, sql, params] of plans) {
    const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
    console.log(
      `\nEXPLAIN ANALYZE ${label}:\n${rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// CPU profiles (--cpu-prof): time per request by the code that caused it, and self time.

/** The package (or file of the service, or bench/) a profiled frame belongs to, if any. */
function owner(url) {
  const match =
    /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url) ??
    /(dist\/src\/[^/]+\/?[^/]*|bench\/)/.exec(url);
  return match?.[1];
}

/**
 * From the samples of a .cpuprofile taken within [fromUs, toUs] (V8 and process.hrtime share the
 * monotonic clock), idle left out: the time per request by the code that caused it, i.e. the
 * innermost package or service frame on the stack (so a socket write or a JSON.stringify counts
 * for the library that called it), and the top functions by self time.
 */
function summarizeProfile(profile, { fromUs = -Infinity, toUs = Infinity, requests, top = 12 }) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const causeOf = new Map();
  const cause = (id) => {
    if (!causeOf.has(id)) {
      const { functionName, url } = byId.get(id).callFrame;
      const special = ['(garbage collector)', '(program)'].includes(functionName);
      const up = parent.get(id);
      causeOf.set(
        id,
        special
          ? functionName
          : (owner(url) ?? (up === undefined ? '(node, no package on the stack)' : cause(up))),
      );
    }
    return causeOf.get(id);
  };
  const self = new Map();
  const causes = new Map();
  let busy = 0;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = Math.max(0, profile.timeDeltas[i] ?? 0);
    t += dt;
    if (t < fromUs || t > toUs) return;
    const { callFrame } = byId.get(id);
    if (callFrame.functionName === '(idle)') return;
    const url = callFrame.url.replace(`file://${ROOT}/`, '').replace(/^.*node_modules\//, '~/');
    const key = `${callFrame.functionName || '(anonymous)'} ${url}${url ? `:${callFrame.lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    causes.set(cause(id), (causes.get(cause(id)) ?? 0) + dt);
    busy += dt;
  });
  const pct = (us) => `${((100 * us) / busy).toFixed(1)}%`;
  const perRequest = (us) => (requests ? fmt(us / requests, 0) : '–');
  const sorted = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  return [
    `Busy (not idle) ${fmt(busy / 1e6, 2)} s of ${fmt((toUs - fromUs) / 1e6, 2)} s, ` +
      `${perRequest(busy)} µs per request (wall-clock samples: they include time preempted).\n`,
    table(
      ['share', 'µs/req', 'caused by (innermost package or service frame)'],
      sorted(causes, 14).map(([k, us]) => [pct(us), perRequest(us), `\`${k}\``]),
    ),
    '',
    table(
      ['self', 'function  location'],
      sorted(self, top).map(([k, us]) => [pct(us), `\`${k}\``]),
    ),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main benchmark

async function migrate(url) {
  // Booting the service once with MIGRATE_ON_BOOT=true applies migrations/ to the database.
  const service = await startTarget('service', { url, extraEnv: { MIGRATE_ON_BOOT: 'true' } });
  await service.stop();
}

async function build() {
  if (args['skip-build']) return;
  const started = performance.now();
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build-if-needed.mjs')], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (!existsSync(SERVICE_ENTRY)) throw new Error(`no ${SERVICE_ENTRY} after the build`);
  log(`build checked in ${secs(started)} s`);
}

async function database() {
  const external = process.env.BENCH_DATABASE_URL;
  if (external) {
    assertBenchDatabase(external);
    return { url: external };
  }
  return startEmbeddedPostgres({ sqlStats: args['sql-stats'] });
}

/**
 * Both targets must meet the same table state: all pages all-visible, fresh statistics. Retries
 * VACUUM once if the visibility map lags (see inTransaction in seed.mjs), and says so.
 */
async function ensureVacuumed(client, tables) {
  let shares = await visibleShare(client, tables);
  if (Object.values(shares).some((share) => share < 0.95)) {
    await sleep(500);
    await vacuumAnalyze(client, tables);
    shares = await visibleShare(client, tables);
  }
  const text = Object.entries(shares).map(([t, v]) => `${t} ${(100 * v).toFixed(0)}%`);
  const low = Object.values(shares).some((share) => share < 0.95);
  log(`${low ? 'WARNING: ' : ''}pages all-visible: ${text.join(', ')}`);
}

async function benchmark() {
  const wall = performance.now();
  await build();
  const { url } = await database();
  await migrate(url);

  const client = await connect(url);
  cleanups.push(() => client.end());
  const seeding = performance.now();
  const timings = await seed(client, { users: options.users, posts: options.posts });
  log(
    `seeded ${options.users} users and ${options.posts} posts in ${secs(seeding)} s ` +
      `(${Object.entries(timings)
        .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
        .join(', ')})`,
  );
  const { rows: shares } = await client.query(
    'SELECT role, count(*)::int AS n FROM users GROUP BY role ORDER BY n DESC',
  );
  log(`roles: ${shares.map((r) => `${r.role} ${r.n}`).join(', ')}`);
  if (args.explain) await explain(client);
  if (args['sql-stats']) {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT pg_stat_statements_reset()');
  }

  const list = endpoints(options).filter((e) => !options.only || options.only.includes(e.key));
  log(
    `load: ${options.connections} connections, ${options.warmupS} s warm-up + ${options.durationS} s per endpoint; ` +
      `endpoints: ${list.map((e) => e.key).join(', ')}`,
  );
  const results = {};
  const probes = {};
  for (const kind of options.targets) {
    const phase = performance.now();
    await ensureVacuumed(client, ['users', 'posts']);
    const target = await startTarget(kind, { url, cpuProf: args['cpu-prof'] });
    probes[kind] = await probe(target);
    results[kind] = await measureTarget(target, list);
    await target.stop();
    // Undo this phase's writes so the next target reads the same tables.
    await client.query('DELETE FROM users WHERE role = $1', [BENCH_POST_ROLE]);
    await vacuumAnalyze(client, ['users']);
    log(`${kind} phase: ${secs(phase)} s`);
    if (args['sql-stats']) await sqlStats(client, kind);
  }

  const { entries, markdown, cpuMarkdown } = report(list, results);
  console.log(
    `\n## users service vs raw baseline (${args.quick ? 'quick' : 'full'}: ${options.users} users, ` +
      `${options.posts} posts, ${options.connections} connections, ${options.durationS} s per endpoint ` +
      `after ${options.warmupS} s warm-up, ${os.cpus().length} cores shared with the load generator)\n`,
  );
  console.log(markdown);
  console.log(
    '\nCPU time per answered request (from /proc, all cores; the app is the service or the baseline ' +
      'process, PostgreSQL all its processes, the load generator this script):\n',
  );
  console.log(cpuMarkdown);
  const noisy = list.flatMap((e) =>
    options.targets
      .map((kind) => [kind, results[kind]?.[e.key]?.otherCpuPct])
      .filter(([, pct]) => pct > 10)
      .map(([kind, pct]) => `${e.key}/${kind} ${fmt(pct, 0)}%`),
  );
  if (noisy.length > 0) {
    console.log(
      `\nWarning: other jobs used more than 10% of the CPU during ${noisy.join(', ')}: ` +
        'those figures are noisy (re-run on an idle machine, or with --wait-idle 60).',
    );
  }
  for (const kind of ['baseline', 'express']) {
    if (!(probes.service && probes[kind])) continue;
    const problems = compareProbes(probes.service, probes[kind], kind);
    console.log(
      problems.length === 0
        ? `\nResponse parity: the ${kind} answered ${PROBES.length + 1} probe requests with the same status, body and headers as the service.`
        : `\nResponse parity problems of the ${kind} (the comparison is unfair until fixed):\n- ${problems.join('\n- ')}`,
    );
  }
  await mkdir(RESULTS, { recursive: true });
  await writeFile(path.join(RESULTS, 'latest.json'), `${JSON.stringify(entries, null, 2)}\n`);
  console.log(`\nwritten to bench/results/latest.json; wall time ${secs(wall)} s`);
  if (args['cpu-prof']) {
    const windows = Object.fromEntries(
      Object.entries(results).map(([kind, byKey]) => [
        kind,
        Object.fromEntries(list.filter((e) => byKey[e.key]).map((e) => [e.name, byKey[e.key]])),
      ]),
    );
    await printProfiles(windows);
  }
}

/** Per endpoint and target, the self time of the profiled process during the measured run. */
async function printProfiles(windows) {
  for (const [kind, file] of Object.entries(profileFiles)) {
    const profile = JSON.parse(await readFile(file, 'utf8'));
    for (const [
      name,
      {
        window: [fromUs, toUs],
        count,
      },
    ] of Object.entries(windows[kind] ?? {})) {
      console.log(`\n### CPU profile: ${kind}, ${name} (${path.relative(ROOT, file)})\n`);
      console.log(summarizeProfile(profile, { fromUs, toUs, requests: count }));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// --scale: the list at concurrency 1, by table size and page depth

/** `count` sequential requests (bounded by `maxMs`), one at a time: latency without queueing. */
async function sequential(base, requestPath, { count, maxMs }) {
  const samples = new Samples(count);
  let errors = 0;
  let total;
  const end = performance.now() + maxMs;
  for (let i = 0; i < count && performance.now() < end; i++) {
    const sent = performance.now();
    const response = await fetch(base + requestPath);
    await response.arrayBuffer();
    if (response.status === 200) {
      samples.add(performance.now() - sent);
      total = response.headers.get('x-total-count');
    } else errors++;
  }
  const [p50Ms, p99Ms, maxMsSeen] = samples.percentiles(50, 99, 100);
  return { n: samples.length, errors, p50Ms, p99Ms, maxMs: maxMsSeen, total: Number(total) };
}

async function serverTime(client, sql, params) {
  const { rows } = await client.query(`EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ${sql}`, params);
  return rows[0]['QUERY PLAN'][0]['Execution Time'];
}

async function scale() {
  const wall = performance.now();
  const sizes = (args.sizes ?? (args.quick ? '20000,100000' : '100000,300000,1000000'))
    .split(',')
    .map(Number);
  const pages = args.quick ? [1, 2, 10, 100] : [1, 2, 10, 100, 1000, 5000];
  const roles = ['admin', 'member'];
  const perCell = args.quick ? 30 : 100;
  await build();
  const { url } = await database();
  await migrate(url);
  const client = await connect(url);
  cleanups.push(() => client.end());
  await client.query('TRUNCATE posts, users RESTART IDENTITY CASCADE');

  const rows = [];
  const json = [];
  let seeded = 0;
  for (const size of sizes) {
    const seeding = performance.now();
    await seedUsers(client, { from: seeded, to: size });
    seeded = size;
    await vacuumAnalyze(client, ['users']);
    await ensureVacuumed(client, ['users']);
    log(`users table at ${size} rows (seeded in ${secs(seeding)} s)`);
    const service = await startTarget('service', { url });
    for (const role of roles) {
      for (const page of pages) {
        const requestPath = `/users?role=${role}&sort=-createdAt&limit=20&page=${page}`;
        await sequential(service.base, requestPath, { count: 5, maxMs: 5000 });
        const result = await sequential(service.base, requestPath, {
          count: perCell,
          maxMs: 10_000,
        });
        const listMs = await serverTime(
          client,
          `SELECT id, name, email, role, created_at, updated_at FROM users WHERE role = $1 ORDER BY created_at DESC, id ASC LIMIT 20 OFFSET ${(page - 1) * 20}`,
          [role],
        );
        const countMs = await serverTime(client, 'SELECT COUNT(1) FROM users WHERE role = $1', [
          role,
        ]);
        const firstPages = page <= 2;
        json.push({ users: size, role, rows: result.total, page, ...result, listMs, countMs });
        rows.push([
          size,
          `${role} (${result.total})`,
          page,
          result.n,
          fmt(result.p50Ms, 2),
          fmt(result.p99Ms, 2),
          fmt(result.maxMs, 2),
          fmt(listMs, 2),
          fmt(countMs, 2),
          result.errors,
          firstPages
            ? result.p99Ms < 50 && !result.errors
              ? 'pass (<50 ms)'
              : 'FAIL (<50 ms)'
            : '',
        ]);
        log(
          `  ${size} ${role} page ${page}: p50 ${fmt(result.p50Ms, 2)} ms, p99 ${fmt(result.p99Ms, 2)} ms`,
        );
      }
    }
    await service.stop();
  }
  console.log(
    `\n## GET /users?role=…&sort=-createdAt&limit=20&page=N at concurrency 1 (service; SQL ms = server-side execution of the page and of the COUNT)\n`,
  );
  console.log(
    table(
      [
        'users',
        'role (matching rows)',
        'page',
        'requests',
        'p50 ms',
        'p99 ms',
        'max ms',
        'page SQL ms',
        'COUNT SQL ms',
        'errors',
        'target',
      ],
      rows,
    ),
  );
  await mkdir(RESULTS, { recursive: true });
  await writeFile(path.join(RESULTS, 'scale.json'), `${JSON.stringify(json, null, 2)}\n`);
  console.log(`\nwritten to bench/results/scale.json; wall time ${secs(wall)} s`);
  log(`role shares: ${ROLE_SHARES.map(([r, s]) => `${r} ${s * 100}%`).join(', ')}`);
}

try {
  await (args.scale ? scale() : benchmark());
  await cleanup();
  process.exit(0);
} catch (error) {
  log(error instanceof Error ? (error.stack ?? error.message) : error);
  await cleanup();
  process.exit(1);
}
