// The benchmark's PostgreSQL: a throwaway embedded cluster tuned for a disposable benchmark (or
// BENCH_DATABASE_URL), the visibility check that makes every target meet the same plans, and the
// optional SQL diagnostics (--sql-stats, --explain).
import pg from 'pg';
import { startThrowawayPostgres } from '../scripts/lib/embedded-pg.mjs';
import { table } from './format.mjs';
import { assertBenchDatabase, vacuumAnalyze, visibleShare } from './seed.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Settings for a disposable benchmark cluster: durability off, enough memory, no JIT. With
 * `trackNested`, pg_stat_statements also records the statements functions run.
 */
function postgresFlags({ sqlStats, trackNested }) {
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
          ...(trackNested ? { 'pg_stat_statements.track': 'all' } : {}),
        }
      : {}),
  };
  return Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
}

/**
 * BENCH_DATABASE_URL (whose name must contain "bench"), or a throwaway embedded cluster whose
 * stop is pushed onto `cleanups`. Resolves with `{ url }`.
 */
export async function startDatabase({ sqlStats, trackNested = false, cleanups, log }) {
  const external = process.env.BENCH_DATABASE_URL;
  if (external) {
    assertBenchDatabase(external);
    return { url: external };
  }
  const started = performance.now();
  // The benchmark's own signal handlers stop the service and baselines before PostgreSQL.
  const cluster = await startThrowawayPostgres({
    prefix: 'users-bench-pg-',
    database: 'bench',
    postgresFlags: postgresFlags({ sqlStats, trackNested }),
    takeOverSignals: true,
  });
  cleanups.push(cluster.stop);
  log(
    `embedded PostgreSQL on 127.0.0.1:${cluster.port} (${cluster.dir}), up in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return cluster;
}

export async function connect(url) {
  const client = new pg.Client({ connectionString: url, application_name: 'bench-orchestrator' });
  await client.connect();
  return client;
}

/**
 * Every target must meet the same table state: all pages all-visible, fresh statistics. Retries
 * VACUUM once if the visibility map lags (see inTransaction in seed.mjs), and says so.
 */
export async function ensureVacuumed(client, tables, log) {
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

/**
 * pg_stat_statements since the last reset: what SQL each request really cost (calls, mean ms).
 * Top-level statements only: a function's statements are inside its caller's time.
 */
export async function printSqlStats(client, label) {
  const { rows } = await client.query(
    `SELECT calls, round(mean_plan_time::numeric, 3) AS plan_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
            round(total_exec_time::numeric) AS total_ms, round(rows::numeric / calls, 1) AS rows_per_call,
            round((shared_blks_hit + shared_blks_read)::numeric / calls, 1) AS blocks_per_call,
            regexp_replace(query, '\\s+', ' ', 'g') AS query
     FROM pg_stat_statements
     WHERE query !~* 'pg_stat_statements|^(VACUUM|DELETE FROM users WHERE role)' AND calls > 100
       AND toplevel
     ORDER BY total_exec_time DESC LIMIT 12`,
  );
  await client.query('SELECT pg_stat_statements_reset()');
  console.log(`\nSQL of ${label} (pg_stat_statements, calls > 100):\n`);
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
export async function printExplain(client, role = 'member') {
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
