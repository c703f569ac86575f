// `npm run bench -- --overload`: the service as deployed, offered far more than it can serve.
//   1. capacity: GET /users/:id from 50 keep-alive callers (wrk), answered req/s;
//   2. open loop: arrivals at 2× and 4× capacity whatever the answers, a 2 s deadline each, never
//      retried, over at most --connections connections (bench/load/openloop/, Go);
//   3. closed-loop floods: 1,000 and 4,000 callers that send again as soon as answered (hey);
//   4. a mixed spike: reads by id, lists, creates and change-feed long polls at 2× capacity, with
//      the service's rejections per class (overload_rejected_total on its /metrics);
//   5. gRPC spikes: GetUser on 4 and 8 connections × 1,000 streams (h2load).
// During each run the kubelet's probes, the service's peak RSS, and afterwards its recovery are
// watched (bench/overload-watch.mjs). Goodput is 2xx (gRPC: OK) answered within 250 ms per second.
// Options used: --duration (default 15 s per run; --quick 3 s), --warmup, --connections (the open
// loop's, default 8,000), --users, --skip-build, --pin, --node, --wait-idle. Needs wrk; without
// go (golang-go), hey or h2load (nghttp2-client) the runs that use it are skipped, and it says so.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  cpuPerRequest,
  cpuSnapshot,
  foreignCpu,
  PINNED_CORES,
  pinProcess,
  reapedChildrenCpuS,
  waitIdle,
} from './cpu.mjs';
import { fmt } from './format.mjs';
import { findH2load } from './load/h2load.mjs';
import { findHey } from './load/hey.mjs';
import { buildOpenLoop } from './load/openloop.mjs';
import { findWrk } from './load/wrk.mjs';
import {
  CAPACITY_CALLERS,
  capacityLoad,
  floodLoad,
  grpcGoodput,
  grpcSpikeLoad,
  openLoopLoad,
} from './overload-loads.mjs';
import { document, printReport } from './overload-report.mjs';
import { counters, delta, recoveryMs, watch } from './overload-watch.mjs';
import { BENCH_POST_ROLE, seedUsers, vacuumAnalyze } from './seed.mjs';
import { build, migratedDatabase, RESULTS, startTarget } from './targets.mjs';

const MIX = 'read=5,list=2,create=2,feed=1';
const TOOLS = { wrk: findWrk, hey: findHey, h2load: findH2load };

/**
 * Runs one load (`load` resolves with the run's figures) while watching the service, then waits
 * for its recovery. Resolves with the report's row, or with a row carrying the load's error.
 */
async function measured(target, { name, offered, durationS, recoveryId, waitIdleS, log }, load) {
  if (waitIdleS) await waitIdle(waitIdleS, log);
  const before = await counters(target);
  const cpuBefore = cpuSnapshot(target.pid);
  const loadCpuBefore = reapedChildrenCpuS();
  const watching = watch(target);
  let figures;
  try {
    figures = await load();
  } catch (error) {
    await watching.stop();
    log(`${name}: ${error.message}`);
    return { name, offered, error: error.message };
  }
  const loadCpuS = reapedChildrenCpuS() - loadCpuBefore;
  const cpuAfter = cpuSnapshot(target.pid);
  const recovery = await recoveryMs(target, recoveryId);
  const { probes, peakRssBytes } = await watching.stop();
  const after = await counters(target);
  if (!target.alive()) throw new Error(`the service died during ${name}:\n${target.output()}`);
  const row = {
    name,
    offered,
    durationS,
    ...figures,
    loadCpuS,
    serviceCpuS: (cpuPerRequest(cpuBefore, cpuAfter, 1)?.app ?? NaN) / 1e6,
    otherCpuPct: foreignCpu(cpuBefore, cpuAfter),
    recoveryMs: recovery,
    probes,
    peakRssBytes,
    rejected: delta(before.rejected, after.rejected),
    getUserCodes: delta(before.getUserCodes, after.getUserCodes),
  };
  log(
    `${name} (${offered}): goodput ${fmt(row.goodputPerS, 0)}/s, admitted p99 ` +
      `${fmt(row.admittedP99Ms, 0)} ms, probes failed ` +
      `${probes.liveness.failed + probes.readiness.failed}, recovery ${fmt(recovery, 0)} ms`,
  );
  return row;
}

export async function overloadBenchmark(options, { cleanups, log, node }) {
  const missing = Object.keys(TOOLS).filter((tool) => !TOOLS[tool]());
  if (missing.includes('wrk')) throw new Error('--overload needs wrk (Debian package wrk)');
  const wall = performance.now();
  build({ skipBuild: options.skipBuild, log });
  if (options.pin) pinProcess(process.pid, PINNED_CORES.rest);
  const generator = buildOpenLoop({ cleanups, log });
  if (generator.missing) log(`open-loop and mixed runs skipped: ${generator.missing}`);
  if (missing.includes('hey')) log('closed-loop floods skipped: no hey (Debian package hey)');
  if (missing.includes('h2load')) log('gRPC spikes skipped: no h2load (nghttp2-client)');
  const { url, client } = await migratedDatabase({ node, cleanups, log });
  const { users, durationS, connections: conns } = options;
  await seedUsers(client, { to: users });
  await vacuumAnalyze(client, ['users']);
  log(`seeded ${users} users`);
  const target = await startTarget('service', { url, pin: options.pin, node, cleanups, log });
  const id = Math.ceil(users / 2);
  const rows = [];
  const settings = { durationS, waitIdleS: options.waitIdleS, log };
  const run = async (name, offered, load) =>
    rows.push(await measured(target, { name, offered, recoveryId: id, ...settings }, load));

  if (options.warmupS > 0) await capacityLoad(target, { users, durationS: options.warmupS });
  await run('capacity', `${CAPACITY_CALLERS} callers`, () =>
    capacityLoad(target, { users, durationS }),
  );
  const capacity = rows[0].goodputPerS;
  if (!(capacity > 0)) throw new Error(`the capacity run answered nothing: ${rows[0].error}`);
  log(`capacity: ${fmt(capacity, 0)} req/s`);

  const open = (rate, mix) =>
    openLoopLoad(generator.binary, target, {
      rate,
      durationS,
      conns,
      users,
      mix,
      tag: `${Date.now().toString(36)}-${rows.length}`,
    });
  for (const times of generator.binary ? [2, 4] : []) {
    await run(`open loop ${times}×`, `${fmt(times * capacity, 0)}/s`, () => open(times * capacity));
  }
  for (const callers of missing.includes('hey') ? [] : [1000, 4000]) {
    const count = callers.toLocaleString('en');
    await run(`closed loop ${count}`, `${count} callers`, () =>
      floodLoad(target, { id, callers, durationS }),
    );
  }
  if (generator.binary) {
    await run('mixed spike 2×', `${fmt(2 * capacity, 0)}/s`, () => open(2 * capacity, MIX));
    await client.query('DELETE FROM users WHERE role = $1', [BENCH_POST_ROLE]);
  }
  for (const clients of missing.includes('h2load') ? [] : [4, 8]) {
    await run(`gRPC ${clients} × 1,000`, `${clients} conns × 1,000 streams`, () =>
      grpcSpikeLoad(target, { clients, id, durationS }),
    );
    if (!rows.at(-1).error) rows.push(grpcGoodput(rows.pop()));
  }
  await target.stop();

  printReport(rows, capacity, { options, node, wall, mix: MIX });
  await mkdir(RESULTS, { recursive: true });
  const json = document(rows, { capacity, options, node });
  await writeFile(path.join(RESULTS, 'overload-latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  console.log('\nwritten to bench/results/overload-latest.json');
}
