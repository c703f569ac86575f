// `npm run bench`: the production build of the service, as deployed, beside a hand-written raw
// baseline, the bare Express 5 ceiling and the shape of the NestJS sample 05-sql-typeorm
// (bench/baseline/), on the same seeded PostgreSQL, under the same load, interleaved and repeated.
// See bench/README.md.
//
//   npm run bench                     full run: 100k users, 500k posts, 5 s warm-up + 20 s per endpoint, 2 repetitions
//   npm run bench -- --quick          smaller seed, 1 s + 3 s per endpoint (a few minutes)
//   npm run bench -- --scale          list latency at concurrency 1 by table size and page depth
//   npm run bench -- --auth           authentication on vs off, and a first-seen token's cost per algorithm
//   npm run bench -- --feed           the change feed: creates and PATCHes with its triggers on vs off, a
//                                     page of 500 from 1,000,000 events, commit-to-consumer lag at 500 writes/s
//   npm run bench -- --overload       beyond capacity: open loop at 2× and 4× capacity (a Go generator,
//                                     --connections its most connections, default 8,000), closed-loop floods of
//                                     1,000 and 4,000 callers, a mixed spike, gRPC 4 and 8 × 1,000 streams; goodput,
//                                     probes, peak RSS, recovery (15 s per run, --quick 3 s)
//   npm run bench -- --scim           SCIM beside REST: a userName filter vs a read by id, a SCIM vs a REST
//                                     create, a group PATCH adding a member to 10, 1,000 and 100,000, and
//                                     the filters' plans (3 s + 2 × 15 s per request, --quick 1 s + 2 × 3 s)
//   options: --duration S --warmup S --repetitions N --connections N --users N --posts N
//            --only health,user,list,posts,grpc,patch,create   --targets service,baseline,express,nest-sample
//            --load-generator auto|wrk|autocannon   --skip-build   --wait-idle S
//            --cpu-prof (per-endpoint self time)   --sql-stats (pg_stat_statements per run)
//            --explain (plans of the list query)   --sizes 100000,1000000 (--scale)
//            --tracing (adds target `traced`: the service exporting every span to a local sink)
//            --pin (each target alone on core 0; PostgreSQL, the load generator and this script on core 1)
//            --node 24 (the targets on the pinned Node 24 of .nvmrc, installed with npm on first use;
//            also an exact version or a node binary's path; default: the runtime running this script)
//            --compare DIR (adds target service@<DIR's name>: the service built in DIR, another
//            checkout of this repository such as a git worktree of an older commit, started like
//            the service and measured interleaved with it; the report adds service ÷ that build)
//
// Everything listens on 127.0.0.1 and every load loop is bounded in time and count. PostgreSQL is
// embedded (a throwaway cluster in a temp directory) unless BENCH_DATABASE_URL names a database
// whose name contains "bench" (the seed empties its users and posts tables).
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cleanupOnExit } from '../scripts/lib/cleanup.mjs';
import { resolveNode } from '../scripts/lib/node-runtime.mjs';
import {
  connect,
  ensureVacuumed,
  printExplain,
  printSqlStats,
  startDatabase,
} from './database.mjs';
import { PINNED_CORES, pinProcess } from './cpu.mjs';
import { endpoints } from './endpoints.mjs';
import { secs } from './format.mjs';
import {
  chooseGrpcLoadGenerator,
  chooseLoadGenerator,
  measureInterleaved,
} from './load/measure.mjs';
import { parseOptions } from './options.mjs';
import { compareProbes, compareShared, probe, PROBES, SAMPLE_PROBES } from './parity.mjs';
import { printProfiles } from './profile.mjs';
import { entries, goalsTable, markdown, noisyRuns } from './report.mjs';
import { scale } from './scale.mjs';
import { BENCH_POST_ROLE, seed, vacuumAnalyze } from './seed.mjs';
import { authBenchmark } from './auth.mjs';
import { feedBenchmark } from './feed.mjs';
import { overloadBenchmark } from './overload.mjs';
import { scimBenchmark } from './scim.mjs';
import { build, comparedBuild, migrate, RESULTS, startTarget } from './targets.mjs';
import { tracingSink, tracingTable } from './tracing.mjs';

const log = (...args) => console.error(...args);
const options = parseOptions();

// Whatever was started is stopped on success, on error and on SIGINT/SIGTERM/SIGHUP, in reverse
// order (load, then the servers, then PostgreSQL).
const { cleanups, cleanup } = cleanupOnExit({
  what: 'the benchmark',
  log,
  signals: [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ],
});
/** The runtime the targets run on (the report says which). */
const node = resolveNode(options.node, { log });
log(`targets on Node ${node.version} (${node.path}); this script on Node ${process.version}`);
/** The other build of the service (--compare), checked before anything starts. */
const compare = options.compare === undefined ? undefined : comparedBuild(options.compare);
if (compare) log(`compared build: ${compare.root} (${compare.commit ?? 'not a git checkout'})`);
const context = { cleanups, log, node };

async function seedDatabase(client) {
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
}

function printReport(list, results, probes, generators, sink) {
  const rows = entries(list, results);
  const tables = markdown(rows, { compared: compare?.label });
  console.log(
    `\n## users service vs raw baseline, Express 5 ceiling and NestJS sample` +
      `${compare ? ` and ${compare.label} (${compare.commit ?? compare.root})` : ''} (${options.quick ? 'quick' : 'full'}: ` +
      `${options.users} users, ${options.posts} posts, ${options.connections} connections, ` +
      `${options.repetitions} interleaved repetitions of ${options.durationS} s per endpoint after ` +
      `${options.warmupS} s of warm-up, load from ${generators}, ${os.cpus().length} cores shared ` +
      `with the load generator; targets on Node ${node.version})\n`,
  );
  console.log(tables.throughput);
  const goals = goalsTable(rows);
  if (goals) console.log(`\nGoals (medians of the repetitions):\n\n${goals}`);
  console.log(
    '\nCPU time per answered request, median of the repetitions (from /proc, all cores; the app is ' +
      'the service, the baseline or the NestJS sample process, PostgreSQL all its processes, the load generator ' +
      'this script and wrk):\n',
  );
  console.log(tables.cpu);
  if (sink) {
    console.log('\nTracing on (OTLP http/protobuf, every request sampled) against off:\n');
    console.log(tracingTable(list, results, sink.stats));
  }
  const noisy = noisyRuns(list, results, compare && { compared: compare.label });
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
  if (probes.service && probes['nest-sample']) {
    const problems = compareShared(probes.service, probes['nest-sample']);
    console.log(
      problems.length === 0
        ? `\nResponse parity: the nest-sample answered ${SAMPLE_PROBES.length} probe requests with the same status, Content-Type and X-Total-Count as the service, and the same items and values in the fields they share.`
        : `\nResponse parity problems of the nest-sample (the comparison is unfair until fixed):\n- ${problems.join('\n- ')}`,
    );
  }
  if (probes.service && probes.compared) {
    // Two builds may answer differently on purpose: said, not judged.
    const problems = compareProbes(probes.service, probes.compared, compare.label);
    console.log(
      problems.length === 0
        ? `\nResponse parity: ${compare.label} answered ${PROBES.length + 1} probe requests with the same status, body and headers as the service.`
        : `\n${compare.label} answers differently from the service:\n- ${problems.join('\n- ')}`,
    );
  }
  return rows;
}

async function benchmark() {
  const wall = performance.now();
  const generator = chooseLoadGenerator(options.loadGenerator);
  const grpcGenerator = chooseGrpcLoadGenerator(generator);
  const generators = `${generator} (HTTP) and ${grpcGenerator} (gRPC)`;
  build({ skipBuild: options.skipBuild, log });
  // Before PostgreSQL starts, so that it and every wrk run inherit the core.
  if (options.pin) pinProcess(process.pid, PINNED_CORES.rest);
  const { url } = await startDatabase({ sqlStats: options.sqlStats, ...context });
  await migrate(url, context);

  const client = await connect(url);
  cleanups.push(() => client.end());
  await seedDatabase(client);
  if (options.explain) await printExplain(client);
  if (options.sqlStats) await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await ensureVacuumed(client, ['users', 'posts'], log);
  // Undoes a write run (and the parity probes' user), so every target reads the same tables.
  const undoWrites = async () => {
    await client.query('DELETE FROM users WHERE role = $1', [BENCH_POST_ROLE]);
    await client.query(`DELETE FROM idempotency_keys WHERE key LIKE 'bench-%'`);
    await vacuumAnalyze(client, ['users']);
  };

  const list = endpoints(options).filter((e) => !options.only || options.only.includes(e.key));
  const targets = [];
  const probes = {};
  const sink = options.targets.includes('traced') ? await tracingSink(cleanups) : undefined;
  for (const kind of options.targets) {
    const extraEnv = kind === 'traced' ? sink.env : {};
    const target = await startTarget(kind, {
      url,
      extraEnv,
      cpuProf: options.cpuProf,
      pin: options.pin,
      compare,
      ...context,
    });
    targets.push(target);
    probes[kind] = await probe(
      target,
      kind === 'nest-sample' ? { paths: SAMPLE_PROBES, create: false } : undefined,
    );
  }
  await undoWrites();
  log(
    `load from ${generators}: ${options.connections} connections, ${options.warmupS} s warm-up + ` +
      `${options.durationS} s per endpoint and target, ${options.repetitions} repetitions; ` +
      `endpoints: ${list.map((e) => e.key).join(', ')}`,
  );
  if (options.sqlStats) await client.query('SELECT pg_stat_statements_reset()');
  const results = await measureInterleaved(targets, list, {
    options,
    generator,
    log,
    afterWrites: undoWrites,
    afterRun: async (target, endpoint, rep) => {
      if (options.sqlStats && rep === options.repetitions) {
        await printSqlStats(client, `${target.kind}, ${endpoint.name}`);
      } else if (options.sqlStats) {
        await client.query('SELECT pg_stat_statements_reset()');
      }
    },
  });
  for (const target of targets) await target.stop();

  const rows = printReport(list, results, probes, generators, sink);
  await mkdir(RESULTS, { recursive: true });
  const document = {
    date: new Date().toISOString(),
    mode: options.quick ? 'quick' : 'full',
    loadGenerator: generator,
    grpcLoadGenerator: grpcGenerator,
    repetitions: options.repetitions,
    durationS: options.durationS,
    warmupS: options.warmupS,
    connections: options.connections,
    users: options.users,
    posts: options.posts,
    cores: os.cpus().length,
    node: node.version,
    ...(compare && {
      compare: { label: compare.label, dir: compare.root, commit: compare.commit },
    }),
    endpoints: rows,
  };
  await writeFile(path.join(RESULTS, 'latest.json'), `${JSON.stringify(document, null, 2)}\n`);
  console.log(`\nwritten to bench/results/latest.json; wall time ${secs(wall)} s`);
  if (options.cpuProf) await printProfiles(targets, results, list);
}

try {
  await (options.scale
    ? scale(options, context)
    : options.auth
      ? authBenchmark(options, context)
      : options.feed
        ? feedBenchmark(options, context)
        : options.overload
          ? overloadBenchmark(options, context)
          : options.scim
            ? scimBenchmark(options, context)
            : benchmark());
  await cleanup();
  process.exit(0);
} catch (error) {
  log(error instanceof Error ? (error.stack ?? error.message) : error);
  await cleanup();
  process.exit(1);
}
