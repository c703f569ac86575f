// `npm run bench -- --feed`, part 2: a page of 500 events from a table of 1,000,000. The
// service's own page statement (ChangesRepository, built from dist/ as the service builds it)
// under EXPLAIN (ANALYZE, BUFFERS) at three depths, and the same pages through the HTTP API.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fmt, median, table } from './format.mjs';

const DIST = path.resolve(import.meta.dirname, '..', 'dist', 'src');
const EVENTS = 1_000_000;
const PAGE = 500;
const REPEATS = 20;

const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);

/** The page statement and the token encoder of the built service. */
async function serviceParts(url) {
  const { DataSource } = await import('typeorm');
  const { UserChange } = await load('changes/user-change.entity.js');
  const { UserChangesWatermark } = await load('changes/user-changes-watermark.entity.js');
  const { ChangesRepository } = await load('changes/changes.repository.js');
  const { encodeChangeToken } = await load('changes/change-token.js');
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    entities: [UserChange, UserChangesWatermark],
  });
  await dataSource.initialize();
  try {
    const repository = new ChangesRepository(
      dataSource.getRepository(UserChange),
      dataSource.getRepository(UserChangesWatermark),
      undefined,
    );
    return { pageSql: repository.pageSql.text, encodeChangeToken };
  } finally {
    await dataSource.destroy();
  }
}

/** Every node of a JSON plan, as `Node Type (index)`, depth first. */
function nodes(plan) {
  const name = plan['Index Name']
    ? `${plan['Node Type']} (${plan['Index Name']})`
    : plan['Node Type'];
  return [name, ...(plan.Plans ?? []).flatMap(nodes)];
}

/**
 * Adds 1,000,000 events (spread over the positions below the current horizon, several per
 * position as a transaction writing several users makes them, for users no one reads), then
 * measures pages of 500 at the start, the middle and the end: the statement's execution time in
 * PostgreSQL (median of 20 EXPLAIN ANALYZE runs) and its plan, and the request's time through the
 * service's HTTP API (median and p99 of 20).
 */
export async function feedPage(url, client, target, log) {
  const { pageSql, encodeChangeToken } = await serviceParts(url);
  const started = performance.now();
  await client.query(
    `INSERT INTO user_changes (position, user_id, version, type, changed, at, xid)
     SELECT p, 1000000 + g % 250000, 1000 + g / 250000, 'updated', '{name}', now(), p
     FROM generate_series(0, $1::int - 1) g,
       LATERAL (SELECT 1 + g::bigint * (pg_snapshot_xmin(pg_current_snapshot())::text::bigint - 2) / $1 AS p) x`,
    [EVENTS],
  );
  await client.query('VACUUM (ANALYZE) user_changes');
  const { rows: sizes } = await client.query(
    `SELECT count(*)::int AS n, pg_total_relation_size('user_changes')::float8 AS bytes FROM user_changes`,
  );
  const total = sizes[0].n;
  log(
    `added ${EVENTS} events in ${((performance.now() - started) / 1000).toFixed(1)} s: ` +
      `${total} in all, ${(sizes[0].bytes / 2 ** 20).toFixed(0)} MiB with indexes`,
  );
  /** The key just before the event at `offset` in feed order. */
  const before = async (offset) => {
    const { rows } = await client.query(
      'SELECT position::text FROM user_changes ORDER BY position, id OFFSET $1 LIMIT 1',
      [offset],
    );
    return { position: BigInt(rows[0].position), id: 0n };
  };
  const depths = [
    ['from the start (no token)', undefined],
    ['the middle', await before(Math.floor(total / 2))],
    ['near the end', await before(total - 2 * PAGE)],
  ];
  const rows = [];
  for (const [label, key] of depths) {
    const parameters = [key?.position.toString() ?? null, key?.id.toString() ?? null, PAGE];
    const executions = [];
    let plan;
    let returned = 0;
    for (let i = 0; i < REPEATS; i++) {
      const { rows: explained } = await client.query(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${pageSql}`,
        parameters,
      );
      const [result] = explained[0]['QUERY PLAN'];
      executions.push(result['Execution Time']);
      plan = result.Plan;
      returned = plan['Actual Rows'];
    }
    const query = key ? `&after=${encodeChangeToken(key)}` : '';
    const http = [];
    for (let i = 0; i < REPEATS; i++) {
      const from = performance.now();
      const res = await fetch(`${target.url}/users/changes?limit=${PAGE}${query}`);
      const body = await res.json();
      http.push(performance.now() - from);
      if (res.status !== 200 || body.events.length !== PAGE) {
        throw new Error(
          `GET /users/changes ${label}: ${res.status}, ${body.events?.length} events`,
        );
      }
    }
    http.sort((a, b) => a - b);
    rows.push([
      label,
      String(returned),
      fmt(median(executions), 2),
      fmt(median(http), 1),
      fmt(http[Math.ceil(http.length * 0.99) - 1], 1),
      [...new Set(nodes(plan))].join(', '),
    ]);
  }
  return {
    events: sizes[0].n,
    bytes: sizes[0].bytes,
    table: table(
      ['page', 'rows', 'database ms (median)', 'HTTP ms (median)', 'HTTP ms (p99)', 'plan nodes'],
      rows,
    ),
  };
}
