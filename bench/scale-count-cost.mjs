// What keeping the list counts costs a create (bench/scale.mjs): POST /users with the count
// triggers on and off, at concurrency 1 (median latency) and 50 (throughput), alternated.
import { fmt, median } from './format.mjs';
import { chooseLoadGenerator, load } from './load/measure.mjs';
import { endpoints } from './endpoints.mjs';
import { BENCH_POST_ROLE } from './seed.mjs';
import { startTarget } from './targets.mjs';

const TRIGGERS = [
  'users_list_counts_insert',
  'users_list_counts_update',
  'users_list_counts_delete',
];

async function setTriggers(client, enabled) {
  for (const trigger of TRIGGERS) {
    await client.query(`ALTER TABLE users ${enabled ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`);
  }
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

export async function countCost(client, url, { options, cleanups, log }) {
  const generator = chooseLoadGenerator(options.loadGenerator);
  const service = await startTarget('service', {
    url,
    extraEnv: { LOG_LEVEL: 'warn' },
    cleanups,
    log,
  });
  const create = endpoints({ users: 1 }).find((endpoint) => endpoint.key === 'create');
  const runs = { on: { c1: [], c50: [] }, off: { c1: [], c50: [] } };
  const count = options.quick ? 200 : 500;
  const durationS = options.quick ? 3 : 10;
  try {
    for (let round = 0; round < 2; round++) {
      for (const mode of round === 0 ? ['on', 'off'] : ['off', 'on']) {
        await setTriggers(client, mode === 'on');
        runs[mode].c1.push(await sequentialCreates(service.base, count, `${mode}${round}`));
        const result = await load(generator, service, create, {
          durationS,
          connections: 50,
          users: 1,
          seed: round,
        });
        runs[mode].c50.push(result.rps);
        await client.query('DELETE FROM users WHERE role = $1', [BENCH_POST_ROLE]);
      }
    }
  } finally {
    await setTriggers(client, true);
    await client.query('SELECT list_counts_rebuild()');
    await service.stop();
  }
  const summary = {
    c1MedianMsOn: median(runs.on.c1),
    c1MedianMsOff: median(runs.off.c1),
    c50RpsOn: median(runs.on.c50),
    c50RpsOff: median(runs.off.c50),
  };
  console.log('\n## What keeping the counts costs POST /users (medians of 2 alternated rounds)\n');
  console.log('| | counts on | counts off | cost |');
  console.log('| --- | --- | --- | --- |');
  console.log(
    `| c=1 median latency | ${fmt(summary.c1MedianMsOn, 2)} ms | ${fmt(summary.c1MedianMsOff, 2)} ms | ` +
      `${fmt(summary.c1MedianMsOn - summary.c1MedianMsOff, 2)} ms |`,
  );
  console.log(
    `| c=50 throughput (${generator}) | ${fmt(summary.c50RpsOn, 0)} req/s | ${fmt(summary.c50RpsOff, 0)} req/s | ` +
      `${fmt((1 - summary.c50RpsOn / summary.c50RpsOff) * 100, 1)} % |`,
  );
  return summary;
}
