// --scale: lists at 10k, 1M and 10M users (bench/README.md, `--scale`). At each size, at
// concurrency 1: GET /users/:id (the reference), page 1 of the list with its exact total, a cursor
// page at depth 1,000,000 (or half the table), with and without the role filter, and the time to
// walk 1,000,000 rows by cursor. Then what keeping the counts costs a create.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PINNED_CORES, pinProcess } from './cpu.mjs';
import { connect, ensureVacuumed, startDatabase } from './database.mjs';
import { fmt, secs, table } from './format.mjs';
import { countCost } from './scale-count-cost.mjs';
import { cursorAt, sequential, startScaleService, walk } from './scale-measure.mjs';
import { seedUsers, vacuumAnalyze } from './seed.mjs';
import { build, migrate, RESULTS } from './targets.mjs';

const LISTS = [
  { name: 'all users, by id', query: 'limit=20', scope: 'users', sort: [], role: undefined },
  {
    name: 'role=member, -createdAt',
    query: 'role=member&sort=-createdAt&limit=20',
    scope: 'users?role=member',
    sort: [{ field: 'createdAt', direction: 'DESC' }],
    role: 'member',
  },
];

/**
 * `npm run bench -- --scale`: grows the users table through the sizes. The rows are inserted
 * without the count triggers, as rows that existed before the upgrade that added them, and the
 * counts are then back-filled by the migration's own function (list_counts_rebuild), whose time is
 * reported: the path a real upgrade takes.
 */
export async function scale(options, { node, cleanups, log }) {
  const wall = performance.now();
  const sizes = (options.sizes ?? (options.quick ? '10000,100000' : '10000,1000000,10000000'))
    .split(',')
    .map(Number);
  const perCell = options.quick ? 30 : 100;
  build({ skipBuild: options.skipBuild, log });
  if (options.pin) pinProcess(process.pid, PINNED_CORES.rest);
  const { url } = await startDatabase({ sqlStats: options.sqlStats, cleanups, log });
  await migrate(url, { node, cleanups, log });
  const client = await connect(url);
  cleanups.push(() => client.end());
  await client.query('TRUNCATE posts, users RESTART IDENTITY CASCADE');

  const rows = [];
  const json = {
    date: new Date().toISOString(),
    node: node?.version ?? process.version,
    sizes: [],
  };
  let seeded = 0;
  for (const size of sizes) {
    const seeding = performance.now();
    await seedUsers(client, { from: seeded, to: size, skipTriggers: true });
    seeded = size;
    const seedS = secs(seeding);
    const backfill = performance.now();
    await client.query('SELECT list_counts_rebuild()');
    const backfillS = secs(backfill);
    await vacuumAnalyze(client, ['users']);
    await ensureVacuumed(client, ['users'], log);
    log(`users at ${size}: seeded in ${seedS} s, counts back-filled in ${backfillS} s`);
    const service = await startScaleService(url, { options, node, cleanups, log });
    const cell = (what, result) => {
      rows.push([size, what, result.n, fmt(result.p50Ms, 2), fmt(result.p99Ms, 2), result.errors]);
      log(`  ${size} ${what}: p50 ${fmt(result.p50Ms, 2)} ms, p99 ${fmt(result.p99Ms, 2)} ms`);
      return result;
    };
    const byId = cell(
      'GET /users/:id',
      await sequential(service.base, (i) => `/users/${1 + ((i * 7919) % size)}`, perCell),
    );
    const entry = { users: size, seedS: Number(seedS), backfillS: Number(backfillS), byId };
    const depth = Math.min(1_000_000, Math.floor(size / 2));
    for (const list of LISTS) {
      const first = cell(
        `${list.name}: page 1 (total ${fmt(await totalOf(service.base, list.query), 0)})`,
        await sequential(service.base, () => `/users?${list.query}`, perCell),
      );
      const token = await cursorAt(client, list, depth);
      const deep = cell(
        `${list.name}: cursor page at depth ${depth}`,
        await sequential(service.base, () => `/users?${list.query}&cursor=${token}`, perCell),
      );
      entry[list.role ?? 'all'] = {
        page1: first,
        cursorDepth: depth,
        cursorPage: deep,
        page1VsById: first.p50Ms / byId.p50Ms,
        deepVsPage1: deep.p50Ms / first.p50Ms,
      };
    }
    const walked = await walk(service.base, Math.min(1_000_000, size), { maxMs: 300_000 });
    rows.push([size, `walk ${walked.rows} rows by cursor, limit=100`, walked.pages, '', '', 0]);
    log(`  ${size} walk: ${walked.rows} rows in ${fmt(walked.seconds, 1)} s`);
    entry.walk = walked;
    json.sizes.push(entry);
    await service.stop();
  }

  console.log(
    `\n## Lists by table size, concurrency 1 (service on Node ${json.node}, LOG_LEVEL=warn)\n`,
  );
  console.log(table(['users', 'request', 'requests', 'p50 ms', 'p99 ms', 'errors'], rows));
  console.log(
    '\n| users | seeded s | counts back-filled s | page 1 ÷ by id (all, member) | depth page ÷ page 1 (all, member) | walk s |',
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const s of json.sizes) {
    console.log(
      `| ${s.users} | ${s.seedS} | ${s.backfillS} | ${fmt(s.all.page1VsById, 2)}×, ${fmt(s.member.page1VsById, 2)}× | ` +
        `${fmt(s.all.deepVsPage1, 2)}×, ${fmt(s.member.deepVsPage1, 2)}× | ${fmt(s.walk.seconds, 1)} (${s.walk.rows} rows) |`,
    );
  }

  json.countCost = await countCost(client, url, { options, node, cleanups, log });
  await mkdir(RESULTS, { recursive: true });
  await writeFile(path.join(RESULTS, 'scale.json'), `${JSON.stringify(json, null, 2)}\n`);
  console.log(`\nwritten to bench/results/scale.json; wall time ${secs(wall)} s`);
}

async function totalOf(base, query) {
  const response = await fetch(`${base}/users?${query}`);
  await response.arrayBuffer();
  return Number(response.headers.get('x-total-count'));
}
