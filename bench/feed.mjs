// `npm run bench -- --feed`: what the change feed costs (docs/events.md).
//   1. POST /users and PATCH /users/:id on one running service, with the feed's triggers on and
//      off (ALTER TABLE users DISABLE TRIGGER in the benchmark's own database), interleaved and
//      repeated: req/s and p99 of each, and on ÷ off;
//   2. a page of 500 events from a table of 1,000,000 (bench/feed-page.mjs);
//   3. the lag from a write's commit to a long-polling consumer at 500 writes/s
//      (bench/feed-lag.mjs).
// Options used: --duration, --warmup, --repetitions, --connections, --users, --skip-build, --pin,
// --node. Needs wrk (Debian package wrk).
import { PINNED_CORES, pinProcess } from './cpu.mjs';
import { connect, startDatabase } from './database.mjs';
import { feedLag, lagTable } from './feed-lag.mjs';
import { feedPage } from './feed-page.mjs';
import { fmt, median, table } from './format.mjs';
import { findWrk, wrkLoad } from './load/wrk.mjs';
import { BENCH_POST_ROLE, seedUsers, vacuumAnalyze } from './seed.mjs';
import { build, migrate, startTarget } from './targets.mjs';

/** The feed's triggers on users (migration 1718000000005-UserChanges). */
const TRIGGERS = ['users_changes_insert', 'users_changes_update', 'users_changes_delete'];
const ENDPOINTS = [
  { key: 'create', name: 'POST /users' },
  { key: 'patch', name: 'PATCH /users/:id' },
];

/** Turns the feed's triggers on or off; between runs only (ALTER TABLE waits for every query). */
async function setFeed(client, on) {
  for (const trigger of TRIGGERS) {
    await client.query(`ALTER TABLE users ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`);
  }
}

/** Undoes a run's creates, without events (the feed's table keeps what the runs added). */
async function undoCreates(client) {
  await setFeed(client, false);
  await client.query('DELETE FROM users WHERE role = $1', [BENCH_POST_ROLE]);
  await vacuumAnalyze(client, ['users', 'user_changes']);
}

/** Every endpoint with the feed off and on, in alternating order, `repetitions` times. */
async function onOff(target, client, users, options, log) {
  const runs = Object.fromEntries(
    ENDPOINTS.map(({ key }) => [key, { load: { on: [], off: [] }, alone: { on: [], off: [] } }]),
  );
  const run = async (endpoint, on, durationS, connections = options.connections) => {
    await setFeed(client, on);
    const result = await wrkLoad(target, endpoint, {
      durationS,
      connections,
      users,
      seed: 7,
      maxRequests: 10_000_000,
    });
    if (endpoint.key === 'create') await undoCreates(client);
    if (result.errors > 0) {
      throw new Error(
        `${endpoint.name}: ${result.errors} failed (${JSON.stringify(result.detail)})`,
      );
    }
    return result;
  };
  for (const endpoint of ENDPOINTS) {
    if (options.warmupS > 0) await run(endpoint, true, options.warmupS);
  }
  // Throughput at options.connections, then latency alone: at one connection, where a request
  // waits for nothing but itself, p99 shows what the trigger adds to it.
  for (const [kind, connections] of [
    ['load', options.connections],
    ['alone', 1],
  ]) {
    for (let repetition = 0; repetition < options.repetitions; repetition++) {
      for (const endpoint of ENDPOINTS) {
        const order = repetition % 2 === 0 ? [false, true] : [true, false];
        for (const on of order) {
          const result = await run(endpoint, on, options.durationS, connections);
          runs[endpoint.key][kind][on ? 'on' : 'off'].push(result);
          log(
            `${endpoint.name}, ${connections} connection(s), feed ${on ? 'on' : 'off'}: ` +
              `${result.rps.toFixed(0)} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms`,
          );
        }
      }
    }
  }
  await setFeed(client, true);
  return runs;
}

function onOffTable(runs, kind) {
  const rows = ENDPOINTS.map(({ key, name }) => {
    const of = (side, field) => median(runs[key][kind][side].map((r) => r[field]));
    const delta = of('on', 'p99Ms') - of('off', 'p99Ms');
    return [
      name,
      fmt(of('off', 'rps'), 0),
      fmt(of('on', 'rps'), 0),
      `${fmt(of('on', 'rps') / of('off', 'rps'), 2)}×`,
      `${fmt(of('off', 'p50Ms'), 2)} / ${fmt(of('on', 'p50Ms'), 2)}`,
      `${fmt(of('off', 'p99Ms'), 2)} / ${fmt(of('on', 'p99Ms'), 2)}`,
      `${delta >= 0 ? '+' : ''}${fmt(delta, 2)}`,
    ];
  });
  return table(
    [
      'endpoint',
      'off req/s',
      'on req/s',
      'on ÷ off',
      'p50 ms off / on',
      'p99 ms off / on',
      'Δ p99 ms',
    ],
    rows,
  );
}

export async function feedBenchmark(options, { cleanups, log, node }) {
  if (!findWrk()) throw new Error('--feed needs wrk (Debian package wrk)');
  const wall = performance.now();
  build({ skipBuild: options.skipBuild, log });
  if (options.pin) pinProcess(process.pid, PINNED_CORES.rest);
  const { url } = await startDatabase({ sqlStats: false, cleanups, log });
  await migrate(url, { node, cleanups, log });
  const client = await connect(url);
  cleanups.push(() => client.end());
  const users = Math.min(options.users, 20_000);
  await seedUsers(client, { to: users });
  await vacuumAnalyze(client, ['users', 'user_changes']);
  log(`seeded ${users} users (and their created events)`);
  const target = await startTarget('service', { url, pin: options.pin, node, cleanups, log });

  const runs = await onOff(target, client, users, options, log);
  const page = await feedPage(url, client, target, log);
  // The lag, at the default poll interval and at a shorter one (another instance of the service).
  const lagS = Math.max(options.durationS, 5);
  const lags = [['200 (default)', ...(await feedLag(url, target, { durationS: lagS, log }))]];
  await target.stop();
  const faster = await startTarget('service', {
    url,
    extraEnv: { CHANGES_POLL_INTERVAL_MS: '50' },
    pin: options.pin,
    node,
    cleanups,
    log,
  });
  lags.push(['50', ...(await feedLag(url, faster, { durationS: lagS, log }))]);
  await faster.stop();

  console.log(
    `\n## Change feed: creates and PATCHes with the feed's triggers on and off (${options.connections} ` +
      `connections, ${options.repetitions} interleaved repetitions of ${options.durationS} s, ` +
      `medians; the service on Node ${node?.version ?? process.version}${options.pin ? ', pinned' : ''})\n`,
  );
  console.log(onOffTable(runs, 'load'));
  console.log('\nThe same, at one connection (latency without queueing):\n');
  console.log(onOffTable(runs, 'alone'));
  console.log(`\n## A page of 500 events from a table of ${page.events.toLocaleString('en')}\n`);
  console.log(page.table);
  console.log('\n## Commit to a long-polling consumer (HTTP, wait=30) at 500 writes/s\n');
  console.log(lagTable(lags));
  console.log(`\nwall time ${((performance.now() - wall) / 1000).toFixed(1)} s`);
}
