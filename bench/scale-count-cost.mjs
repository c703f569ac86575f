// What keeping the list counts costs a create (bench/scale.mjs): POST /users with the count
// triggers on and off, at concurrency 1 (median latency) and 50 (throughput), in alternated
// rounds, plus the CPU per create of the service and PostgreSQL at c=50 and the count trigger's
// own server time per create from pg_stat_user_functions.
import { cpuPerRequest, cpuSnapshot } from './cpu.mjs';
import { fmt, median } from './format.mjs';
import { chooseLoadGenerator, load } from './load/measure.mjs';
import { endpoints } from './endpoints.mjs';
import { startScaleService } from './scale-measure.mjs';
import { BENCH_POST_ROLE } from './seed.mjs';

const INSERT_TRIGGER = 'users_list_counts_insert';
const DELETE_TRIGGER = 'users_list_counts_delete';
const COUNT_FUNCTION = 'users_list_counts';

async function setTrigger(client, trigger, enabled) {
  await client.query(`ALTER TABLE users ${enabled ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`);
}

/** Median latency of `count` creates sent one at a time. */
async function sequentialCreates(base, count, tag) {
  const latencies = [];
  for (let i = 0; i < count; i++) {
    const sent = performance.now();
    const response = await fetch(`${base}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `cost ${tag} ${i}`, role: BENCH_POST_ROLE }),
    });
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`POST /users: ${response.status}`);
    latencies.push(performance.now() - sent);
  }
  return median(latencies);
}

/**
 * The count trigger's server time per call, from pg_stat_user_functions (track_functions = 'pl'
 * on the bench database while the service runs). Backends report function statistics when they
 * go idle or exit, so this is read after the service has stopped.
 */
async function triggerTimePerCall(client) {
  const { rows } = await client.query(
    `SELECT calls, total_time FROM pg_stat_user_functions WHERE funcname = $1`,
    [COUNT_FUNCTION],
  );
  const [row] = rows;
  return row && Number(row.calls) > 0
    ? { calls: Number(row.calls), usPerCall: (1000 * row.total_time) / Number(row.calls) }
    : { calls: 0, usPerCall: NaN };
}

/**
 * Rounds alternate the order of the two modes (on, off; off, on; …) so that a drift of the
 * machine falls on both; each cost is the median over the rounds of the paired difference (c=1)
 * or ratio (c=50) of the two modes in one round. The rows created are deleted between runs with
 * the delete trigger off, so that pg_stat_user_functions counts exactly the creates' calls; the
 * counts are rebuilt at the end.
 */
export async function countCost(client, url, { options, node, cleanups, log }) {
  const generator = chooseLoadGenerator(options.loadGenerator);
  const { rows: databaseRows } = await client.query('SELECT current_database() AS name');
  const database = `"${databaseRows[0].name.replaceAll('"', '""')}"`;
  // track_functions is a superuser setting: without it (a BENCH_DATABASE_URL of a plain role),
  // the trigger's own time is left out of the report.
  const tracked = await client
    .query(`ALTER DATABASE ${database} SET track_functions = 'pl'`)
    .then(() => true)
    .catch((error) => {
      log(`track_functions not set (${error.message}): no trigger time`);
      return false;
    });
  const service = await startScaleService(url, { options, node, cleanups, log });
  const create = endpoints({ users: 1 }).find((endpoint) => endpoint.key === 'create');
  const rounds = options.quick ? 4 : 6;
  const count = options.quick ? 100 : 200;
  const durationS = options.quick ? 3 : 8;
  const perRound = [];
  const undoCreates = async () => {
    await setTrigger(client, DELETE_TRIGGER, false);
    await client.query('DELETE FROM users WHERE role = $1', [BENCH_POST_ROLE]);
    await setTrigger(client, DELETE_TRIGGER, true);
  };
  try {
    // Unmeasured, so that the first round's first mode does not meet a cold service and pool.
    await sequentialCreates(service.base, count, 'warm-up');
    await load(generator, service, create, { durationS, connections: 50, users: 1, seed: rounds });
    await undoCreates();
    if (tracked) {
      await client.query(
        `SELECT pg_stat_reset_single_function_counters(oid) FROM pg_proc WHERE proname = $1`,
        [COUNT_FUNCTION],
      );
    }
    for (let round = 0; round < rounds; round++) {
      const result = {};
      for (const mode of round % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
        await setTrigger(client, INSERT_TRIGGER, mode === 'on');
        const c1 = await sequentialCreates(service.base, count, `${mode}${round}`);
        const before = cpuSnapshot(service.pid);
        const { rps, count: created } = await load(generator, service, create, {
          durationS,
          connections: 50,
          users: 1,
          seed: round,
        });
        const cpu = cpuPerRequest(before, cpuSnapshot(service.pid), created);
        result[mode] = { c1, rps, appCpuUs: cpu?.app, pgCpuUs: cpu?.postgres };
        await undoCreates();
      }
      perRound.push(result);
      log(
        `  counts cost, round ${round + 1} of ${rounds}: c=1 ${fmt(result.on.c1, 2)} / ${fmt(result.off.c1, 2)} ms, ` +
          `c=50 ${fmt(result.on.rps, 0)} / ${fmt(result.off.rps, 0)} req/s (on / off)`,
      );
    }
  } finally {
    // First: its backends report their function statistics when they exit (triggerTimePerCall).
    await service.stop();
    await setTrigger(client, INSERT_TRIGGER, true);
    await setTrigger(client, DELETE_TRIGGER, true);
    if (tracked) await client.query(`ALTER DATABASE ${database} RESET track_functions`);
    await client.query('SELECT list_counts_rebuild()');
  }
  const trigger = tracked ? await triggerTimePerCall(client) : { calls: 0, usPerCall: NaN };
  const summary = {
    rounds,
    c1MedianMsOn: median(perRound.map((r) => r.on.c1)),
    c1MedianMsOff: median(perRound.map((r) => r.off.c1)),
    c1CostMs: median(perRound.map((r) => r.on.c1 - r.off.c1)),
    c50RpsOn: median(perRound.map((r) => r.on.rps)),
    c50RpsOff: median(perRound.map((r) => r.off.rps)),
    c50Loss: median(perRound.map((r) => 1 - r.on.rps / r.off.rps)),
    // CPU per create at c=50 (from /proc): PostgreSQL's is embedded only (bench/cpu.mjs).
    c50PgCpuUsOn: median(perRound.map((r) => r.on.pgCpuUs)),
    c50PgCpuUsOff: median(perRound.map((r) => r.off.pgCpuUs)),
    c50AppCpuUsOn: median(perRound.map((r) => r.on.appCpuUs)),
    c50AppCpuUsOff: median(perRound.map((r) => r.off.appCpuUs)),
    triggerCalls: trigger.calls,
    triggerUsPerCreate: trigger.usPerCall,
    perRound,
  };
  console.log(
    `\n## What keeping the counts costs POST /users (${rounds} alternated rounds; medians)\n`,
  );
  console.log('| | counts on | counts off | cost (median of the rounds) |');
  console.log('| --- | --- | --- | --- |');
  console.log(
    `| c=1 median latency | ${fmt(summary.c1MedianMsOn, 2)} ms | ${fmt(summary.c1MedianMsOff, 2)} ms | ` +
      `${fmt(summary.c1CostMs, 2)} ms |`,
  );
  console.log(
    `| c=50 throughput (${generator}) | ${fmt(summary.c50RpsOn, 0)} req/s | ${fmt(summary.c50RpsOff, 0)} req/s | ` +
      `${fmt(summary.c50Loss * 100, 1)} % |`,
  );
  console.log(
    `| c=50 PostgreSQL CPU per create | ${fmt(summary.c50PgCpuUsOn, 0)} µs | ${fmt(summary.c50PgCpuUsOff, 0)} µs | ` +
      `${fmt(summary.c50PgCpuUsOn - summary.c50PgCpuUsOff, 0)} µs |`,
  );
  console.log(
    `| c=50 service CPU per create | ${fmt(summary.c50AppCpuUsOn, 0)} µs | ${fmt(summary.c50AppCpuUsOff, 0)} µs | ` +
      `${fmt(summary.c50AppCpuUsOn - summary.c50AppCpuUsOff, 0)} µs |`,
  );
  console.log(
    `| the count trigger's server time per create (pg_stat_user_functions, ${trigger.calls} calls) | ` +
      `${fmt(summary.triggerUsPerCreate, 1)} µs | – | ${fmt(summary.triggerUsPerCreate / 1000, 3)} ms |`,
  );
  return summary;
}
