// --scale: the list at concurrency 1, by table size and page depth (bench/README.md, `--scale`).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Samples } from '../scripts/lib/measure.mjs';
import { connect, ensureVacuumed, startDatabase } from './database.mjs';
import { fmt, secs, table } from './format.mjs';
import { ROLE_SHARES, seedUsers, vacuumAnalyze } from './seed.mjs';
import { build, migrate, RESULTS, startTarget } from './targets.mjs';

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

/**
 * `npm run bench -- --scale`: grows the users table through the sizes and, at each, measures the
 * list at concurrency 1 for a rare and a common role at several page depths.
 */
export async function scale(options, { cleanups, log }) {
  const wall = performance.now();
  const sizes = (options.sizes ?? (options.quick ? '20000,100000' : '100000,300000,1000000'))
    .split(',')
    .map(Number);
  const pages = options.quick ? [1, 2, 10, 100] : [1, 2, 10, 100, 1000, 5000];
  const roles = ['admin', 'member'];
  const perCell = options.quick ? 30 : 100;
  build({ skipBuild: options.skipBuild, log });
  const { url } = await startDatabase({ sqlStats: options.sqlStats, cleanups, log });
  await migrate(url, { cleanups, log });
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
    await ensureVacuumed(client, ['users'], log);
    log(`users table at ${size} rows (seeded in ${secs(seeding)} s)`);
    // As before the split: warn-level logs, so the latency is the request's, not its log line's.
    const service = await startTarget('service', {
      url,
      extraEnv: { LOG_LEVEL: 'warn' },
      cleanups,
      log,
    });
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
