// `npm run bench -- --scim`: SCIM 2.0 provisioning (docs/provisioning.md) beside the REST API of
// the same service, on one seeded PostgreSQL, interleaved and repeated:
//   1. GET /scim/v2/Users?filter=userName eq "…" (a distinct seeded userName per request) against
//      GET /users/:id of the same users: goal ≥ 0.8×;
//   2. POST /scim/v2/Users (a unique userName and email per request) against POST /users (a
//      unique email per request): goal ≥ 0.8×;
//   3. PATCH /scim/v2/Groups/:id adding one member, to groups of 10, 1,000 and 100,000 members
//      (each request a user not yet in the group): goal flat, the 100,000 group ≥ 0.8× the 10's;
//   4. EXPLAIN (ANALYZE, BUFFERS) of the statements the service sent for `userName eq` and
//      `externalId eq` and of the one the database's look-up function ran (captured by
//      pg_stat_statements, nested statements included) on the seeded table: goal an index scan of
//      users_user_name_lower_key and users_external_id_idx, no Seq Scan.
// The users are seeded without the count and feed triggers (the counts back-filled, as --scale
// does), every user gets an externalId, the groups are created over SCIM and filled by SQL. Rows a
// run wrote are removed after it. Options used: --quick, --duration, --warmup, --repetitions,
// --connections, --users (at least 100,000 + headroom), --skip-build, --pin, --node,
// --wait-idle, --sql-stats (pg_stat_statements of each request in the last repetition). Needs wrk.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  cpuPerRequest,
  cpuSnapshot,
  foreignCpu,
  PINNED_CORES,
  pinProcess,
  waitIdle,
} from './cpu.mjs';
import { connect, ensureVacuumed, printSqlStats, startDatabase } from './database.mjs';
import { fmt, median, ratio, round, secs, table } from './format.mjs';
import { findWrk, runWrk } from './load/wrk.mjs';
import { seedUsers, truncate, vacuumAnalyze } from './seed.mjs';
import { build, migrate, RESULTS, startTarget } from './targets.mjs';

const SCIM_JSON = 'application/scim+json';
const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const GROUP_SIZES = [10, 1_000, 100_000];
/** How many seeded users the reads cycle through (a distinct userName per request). */
const READ_SAMPLE = 10_000;
const GOAL = 0.8;
const INDEXES = { userName: 'users_user_name_lower_key', externalId: 'users_external_id_idx' };
/** The status counting the benchmark's wrk scripts share. */
const STATUSES_LUA = path.join(import.meta.dirname, 'load', 'wrk-statuses.lua');

/**
 * The wrk script, written next to the run's lists: requests built per key, answers counted by
 * status, each thread stopped at its share of the request budget.
 *   wrk ... -s scim.lua URL -- KEY FILE MAX_PER_THREAD TAG THREADS GROUP
 * FILE holds a request path (reads) or a user id (group PATCHes) per line; thread k of n takes
 * lines k, k+n, k+2n… and cycles through them.
 */
const LUA = String.raw`
dofile(${JSON.stringify(STATUSES_LUA)})

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

local key, max_answers, tag, group
local items = {}
local next_item, created, answered = 0, 0, 0

function init(args)
  key = args[1]
  max_answers = tonumber(args[3])
  tag = args[4] .. "-" .. id
  local thread_count = tonumber(args[5])
  group = args[6]
  if args[2] ~= "-" then
    local index = 0
    for line in io.lines(args[2]) do
      index = index + 1
      if line ~= "" and (index - id) % thread_count == 0 then
        table.insert(items, line)
      end
    end
  end
end

local scim_headers = { ["Content-Type"] = "application/scim+json" }
local json_headers = { ["Content-Type"] = "application/json" }

local function next_line()
  next_item = next_item % #items + 1
  return items[next_item]
end

function request()
  if key == "scimFilter" or key == "restById" then
    return wrk.format("GET", next_line())
  elseif key == "scimCreate" then
    created = created + 1
    local name = string.format("scim-%s-%d", tag, created)
    local body = string.format(
      '{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"%s",' ..
      '"displayName":"Bench User %d","emails":[{"value":"%s@example.com","primary":true}]}',
      name, created, name)
    return wrk.format("POST", "/scim/v2/Users", scim_headers, body)
  elseif key == "restCreate" then
    created = created + 1
    local body = string.format('{"name":"Bench User %d","email":"rest-%s-%d@example.com"}',
      created, tag, created)
    return wrk.format("POST", "/users", json_headers, body)
  elseif key == "groupPatch" then
    local body = '{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],' ..
      '"Operations":[{"op":"add","path":"members","value":[{"value":"' .. next_line() .. '"}]}]}'
    return wrk.format("PATCH", "/scim/v2/Groups/" .. group, scim_headers, body)
  end
  return wrk.format("GET", "/health")
end

function response(status)
  count_status(status)
  answered = answered + 1
  if answered >= max_answers then
    wrk.thread:stop()
  end
end

function done()
  report_statuses(threads)
end
`;

/** A deterministic shuffle (mulberry32), so every run adds the same users in the same order. */
function shuffled(values, seed = 42) {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...values];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** One wrk run of `endpoint` for `durationS` (127.0.0.1 only), at most `budget` answers. */
async function wrkRun(target, endpoint, { script, durationS, connections, budget }) {
  // On two cores one thread is plenty for wrk; more would take CPU from the service.
  const threads = Math.max(1, Math.min(4, Math.floor(os.cpus().length / 2), connections));
  const before = cpuSnapshot(target.pid);
  const parsed = await runWrk({
    base: target.base,
    threads,
    connections,
    durationS,
    script,
    scriptArgs: [
      endpoint.lua,
      endpoint.file ?? '-',
      // Requests in flight when a thread reaches its share are still sent: keep them in the list.
      String(Math.max(1, Math.floor(budget / threads) - connections)),
      `${Date.now().toString(36)}-${endpoint.key}`,
      String(threads),
      String(endpoint.groupId ?? 0),
    ],
  });
  const after = cpuSnapshot(target.pid);
  let ok = 0;
  let shed = 0;
  for (const [code, n] of Object.entries(parsed.statuses)) {
    if (Number(code) === endpoint.status) ok += n;
    // Admission control's answer when the service is over its limit (docs/overload.md): counted.
    else if (Number(code) === 503) shed += n;
  }
  const socketErrors = Object.values(parsed.socketErrors).reduce((sum, n) => sum + n, 0);
  const errors = parsed.requests - ok + socketErrors;
  // Any other status means a wrong request, not a slow service.
  if (ok === 0 || parsed.requests - ok - shed > 0.01 * parsed.requests) {
    throw new Error(
      `${endpoint.name}: ${errors} of ${parsed.requests} requests failed ` +
        `(statuses ${JSON.stringify(parsed.statuses)}, socket ${JSON.stringify(parsed.socketErrors)})`,
    );
  }
  return {
    count: ok,
    rps: ok / parsed.durationS,
    p50Ms: parsed.p50Ms,
    p99Ms: parsed.p99Ms,
    errors,
    shed,
    budgetReached: ok >= Math.floor(budget / threads) - connections,
    otherCpu: foreignCpu(before, after),
    cpu: cpuPerRequest(before, after, ok),
  };
}

/** Seeds `count` users (no count or feed triggers, counts back-filled) with an externalId each. */
async function seedDatabase(client, count, log) {
  const started = performance.now();
  await truncate(client);
  await client.query('TRUNCATE group_members, groups RESTART IDENTITY CASCADE');
  await seedUsers(client, { to: count, skipTriggers: true });
  await client.query('SELECT list_counts_rebuild()');
  await client.query('BEGIN');
  try {
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query(`UPDATE users SET external_id = 'ext-' || id`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
  await vacuumAnalyze(client, ['users']);
  await ensureVacuumed(client, ['users'], log);
  log(`seeded ${count} users (each with an externalId) in ${secs(started)} s`);
}

async function scimFetch(target, method, pathname, body, status) {
  const response = await fetch(`${target.base}${pathname}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': SCIM_JSON },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== status) {
    throw new Error(`${method} ${pathname}: ${response.status} (expected ${status}): ${text}`);
  }
  return text ? JSON.parse(text) : undefined;
}

/** The three groups, created over SCIM with one member, then filled to their size by SQL. */
async function seedGroups(client, target, log) {
  const started = performance.now();
  const groups = [];
  for (const size of GROUP_SIZES) {
    const group = await scimFetch(
      target,
      'POST',
      '/scim/v2/Groups',
      { schemas: [CORE_GROUP], displayName: `Bench ${size}`, members: [{ value: '1' }] },
      201,
    );
    await client.query(
      `INSERT INTO group_members (group_id, user_id) SELECT $1, id FROM users WHERE id <= $2
       ON CONFLICT DO NOTHING`,
      [Number(group.id), size],
    );
    groups.push({ size, id: Number(group.id) });
  }
  await vacuumAnalyze(client, ['groups', 'group_members']);
  const { rows } = await client.query(
    'SELECT group_id, count(*)::int AS n FROM group_members GROUP BY group_id ORDER BY group_id',
  );
  log(
    `groups seeded in ${secs(started)} s: ${rows.map((r) => `#${r.group_id} ${r.n} members`).join(', ')}`,
  );
  return groups;
}

/** Checks each request shape once before any load (status and the answer's gist). */
async function probe(target, sample) {
  const [first] = sample;
  const filter = encodeURIComponent(`userName eq "${first.user_name}"`);
  const list = await scimFetch(target, 'GET', `/scim/v2/Users?filter=${filter}`, undefined, 200);
  if (list.totalResults !== 1 || list.Resources?.[0]?.id !== String(first.id)) {
    throw new Error(`the filter on userName found ${JSON.stringify(list).slice(0, 300)}`);
  }
  const byExternalId = await scimFetch(
    target,
    'GET',
    `/scim/v2/Users?filter=${encodeURIComponent(`externalId eq "ext-${first.id}"`)}`,
    undefined,
    200,
  );
  if (byExternalId.totalResults !== 1) throw new Error('the filter on externalId found no user');
}

/**
 * EXPLAIN (ANALYZE, BUFFERS), after one request with the filter, of the statement the service
 * sent (`markers.page`) and of the one its look-up function ran (`markers.lookup`), each found by
 * a text it contains in pg_stat_statements (which tracks nested statements in this cluster), the
 * page's LIMIT and OFFSET put back as sent.
 */
async function explainFilter(client, target, { attribute, value, markers }) {
  await client.query('SELECT pg_stat_statements_reset()');
  const filter = encodeURIComponent(`${attribute} eq "${value}"`);
  await scimFetch(target, 'GET', `/scim/v2/Users?filter=${filter}`, undefined, 200);
  const plans = [];
  for (const [role, marker] of Object.entries(markers)) {
    const { rows } = await client.query(
      `SELECT query FROM pg_stat_statements WHERE strpos(query, $1) > 0 ORDER BY query`,
      [marker],
    );
    if (rows.length === 0) {
      throw new Error(
        `no statement with ${marker} in pg_stat_statements after the ${attribute} filter`,
      );
    }
    for (const { query } of rows) {
      // The service sends `LIMIT 100 OFFSET 0` as literals (count and startIndex by default).
      const text = query.replace(/LIMIT \$\d+ OFFSET \$\d+/, 'LIMIT 100 OFFSET 0');
      if (/\$[2-9]/.test(text)) throw new Error(`unexpected parameters in ${text}`);
      const { rows: plan } = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, [value]);
      const lines = plan.map((r) => r['QUERY PLAN']);
      const planText = lines.join('\n');
      const index = INDEXES[attribute];
      const usesIndex = new RegExp(
        `(Index Scan|Index Only Scan|Bitmap Index Scan) (Backward )?(using|on) ${index}`,
      ).test(planText);
      const seqScan = /Seq Scan on users/.test(planText);
      const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(planText)?.[1]);
      plans.push({ role, statement: text, lines, index, usesIndex, seqScan, executionMs });
    }
  }
  return plans;
}

/** The measured requests, in pairs (the goal compares the second with the first). */
function endpointsOf(files, groups) {
  const reads = [
    { key: 'restById', lua: 'restById', name: 'GET /users/:id', file: files.rest, status: 200 },
    {
      key: 'scimFilter',
      lua: 'scimFilter',
      name: 'GET /scim/v2/Users?filter=userName eq "…"',
      file: files.filter,
      status: 200,
    },
  ];
  const creates = [
    { key: 'restCreate', lua: 'restCreate', name: 'POST /users', status: 201, writes: true },
    {
      key: 'scimCreate',
      lua: 'scimCreate',
      name: 'POST /scim/v2/Users',
      status: 201,
      writes: true,
    },
  ];
  const patches = groups.map(({ size, id }) => ({
    key: `groupPatch${size}`,
    lua: 'groupPatch',
    name: `PATCH /scim/v2/Groups/:id, add 1 to ${size.toLocaleString('en-US')}`,
    file: files.candidates,
    groupId: id,
    size,
    status: 204,
    writes: true,
  }));
  return { reads, creates, patches };
}

export async function scimBenchmark(options, { cleanups, log, node }) {
  const wall = performance.now();
  if (!findWrk()) throw new Error('--scim needs wrk (Debian package wrk)');
  build({ skipBuild: options.skipBuild, log });
  if (options.pin) pinProcess(process.pid, PINNED_CORES.rest);
  // By default (bench/options.mjs) 3 s + 2 × 15 s per request shape; quick: 1 s + 2 × 3 s.
  const { durationS, warmupS } = options;
  const largest = Math.max(...GROUP_SIZES);
  // Users no group has at first: the PATCHes add them (a run's share, removed after it).
  const headroom = options.quick ? 25_000 : 60_000;
  const users = Math.max(options.users, largest + headroom);

  const { url } = await startDatabase({ sqlStats: true, trackNested: true, cleanups, log });
  await migrate(url, { node, cleanups, log });
  const client = await connect(url);
  cleanups.push(() => client.end());
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await seedDatabase(client, users, log);

  const target = await startTarget('service', { url, pin: options.pin, node, cleanups, log });
  const groups = await seedGroups(client, target, log);
  const { rows: sample } = await client.query(
    'SELECT id, user_name FROM users WHERE id <= $1 ORDER BY md5(id::text) LIMIT $2',
    [largest, READ_SAMPLE],
  );
  await probe(target, sample);

  // 4. The plans first, on the table as seeded and analysed.
  const probeUser = sample[0];
  const explains = {
    userName: await explainFilter(client, target, {
      attribute: 'userName',
      value: probeUser.user_name,
      markers: {
        page: '"users_with_user_name"($1)',
        lookup: 'lower("users"."user_name") = lower($1)',
      },
    }),
    externalId: await explainFilter(client, target, {
      attribute: 'externalId',
      value: `ext-${probeUser.id}`,
      markers: { page: '"users_with_external_id"($1)', lookup: '"users"."external_id" = $1' },
    }),
  };
  // pg_stat_statements off again for the load (both sides would pay it), unless --sql-stats.
  if (!options.sqlStats) {
    await client.query(`ALTER SYSTEM SET pg_stat_statements.track = 'none'`);
    await client.query('SELECT pg_reload_conf()');
    cleanups.push(async () => {
      await client.query('ALTER SYSTEM RESET pg_stat_statements.track').catch(() => {});
    });
  }

  const dir = await mkdtemp(path.join(os.tmpdir(), 'users-bench-scim-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const script = path.join(dir, 'scim.lua');
  const files = {
    rest: path.join(dir, 'rest.txt'),
    filter: path.join(dir, 'filter.txt'),
    candidates: path.join(dir, 'candidates.txt'),
  };
  await writeFile(script, LUA);
  await writeFile(files.rest, sample.map((u) => `/users/${u.id}`).join('\n') + '\n');
  await writeFile(
    files.filter,
    sample
      .map((u) => `/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${u.user_name}"`)}`)
      .join('\n') + '\n',
  );
  const candidates = shuffled(Array.from({ length: users - largest }, (_, i) => largest + 1 + i));
  await writeFile(files.candidates, candidates.join('\n') + '\n');

  const { reads, creates, patches } = endpointsOf(files, groups);
  const pairs = [reads, creates, patches];
  // Undoes a run's writes: the users it created, the members it added.
  const undo = async (endpoint) => {
    if (endpoint.size !== undefined) {
      await client.query('DELETE FROM group_members WHERE group_id = $1 AND user_id > $2', [
        endpoint.groupId,
        largest,
      ]);
      await vacuumAnalyze(client, ['group_members', 'groups']);
    } else if (endpoint.writes) {
      await client.query('DELETE FROM users WHERE id > $1', [users]);
      await vacuumAnalyze(client, ['users']);
    }
  };
  const run = async (endpoint, seconds, { sqlStats = false } = {}) => {
    if (options.waitIdleS) await waitIdle(options.waitIdleS, log);
    if (sqlStats) await client.query('SELECT pg_stat_statements_reset()');
    const result = await wrkRun(target, endpoint, {
      script,
      durationS: seconds,
      connections: options.connections,
      // Reads cycle through their list; a PATCH's budget is the users not yet in the group.
      budget: endpoint.size !== undefined ? candidates.length : 10_000_000,
    });
    if (sqlStats) await printSqlStats(client, endpoint.name);
    await undo(endpoint);
    if (endpoint.size !== undefined && result.budgetReached) {
      log(`  ${endpoint.name}: ran out of users to add after ${result.count} (more headroom?)`);
    }
    return result;
  };

  const all = pairs.flat();
  const runs = Object.fromEntries(all.map((e) => [e.key, []]));
  log(
    `load from wrk: ${options.connections} connections, ${warmupS} s warm-up + ` +
      `${options.repetitions} × ${durationS} s per request, interleaved`,
  );
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    for (const pair of pairs) {
      // The order within a comparison alternates between repetitions.
      const order = repetition % 2 === 0 ? pair : [...pair].reverse();
      for (const endpoint of order) {
        if (repetition === 0 && warmupS > 0) await run(endpoint, warmupS);
        const result = await run(endpoint, durationS, {
          // --sql-stats: what each request sent, in the last repetition.
          sqlStats: options.sqlStats && repetition === options.repetitions - 1,
        });
        runs[endpoint.key].push(result);
        log(
          `  ${endpoint.name}: ${fmt(result.rps, 0)} req/s, p50 ${fmt(result.p50Ms, 2)} ms, ` +
            `p99 ${fmt(result.p99Ms, 2)} ms, ${result.errors} errors (${result.shed} 503), ` +
            `other CPU ${fmt(result.otherCpu, 0)} %`,
        );
      }
    }
  }
  await target.stop();

  const summary = Object.fromEntries(
    all.map((e) => {
      const list = runs[e.key];
      const of = (f) => median(list.map(f));
      return [
        e.key,
        {
          name: e.name,
          rps: of((r) => r.rps),
          minRps: Math.min(...list.map((r) => r.rps)),
          maxRps: Math.max(...list.map((r) => r.rps)),
          p50Ms: of((r) => r.p50Ms),
          p99Ms: of((r) => r.p99Ms),
          errors: list.reduce((sum, r) => sum + r.errors, 0),
          appUs: of((r) => r.cpu?.app),
          postgresUs: of((r) => r.cpu?.postgres),
          otherCpu: Math.max(...list.map((r) => r.otherCpu).filter(Number.isFinite)),
        },
      ];
    }),
  );
  const settings = { users, durationS, warmupS, nodeVersion: node?.version ?? process.version };
  const goals = report(summary, explains, groups, options, settings);
  await writeFile(
    path.join(RESULTS, 'scim.tmp.json'),
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        mode: options.quick ? 'quick' : 'full',
        cores: os.cpus().length,
        node: settings.nodeVersion,
        users,
        connections: options.connections,
        repetitions: options.repetitions,
        durationS,
        warmupS,
        endpoints: Object.fromEntries(
          Object.entries(summary).map(([key, s]) => [
            key,
            Object.fromEntries(
              Object.entries(s).map(([k, v]) => [k, typeof v === 'number' ? round(v, 2) : v]),
            ),
          ]),
        ),
        goals,
        plans: explains,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwritten to bench/results/scim.tmp.json; wall time ${secs(wall)} s`);
}

function report(summary, explains, groups, options, settings) {
  console.log(
    `\n## SCIM beside REST (${options.quick ? 'quick' : 'full'}: ${settings.users.toLocaleString('en-US')} users, ` +
      `${options.connections} connections, ${options.repetitions} interleaved repetitions of ` +
      `${settings.durationS} s after ${settings.warmupS} s of warm-up, load from wrk, ` +
      `${os.cpus().length} cores shared with PostgreSQL and the load generator; the service on ` +
      `Node ${settings.nodeVersion}${options.pin ? ', pinned' : ''})\n`,
  );
  console.log(
    table(
      [
        'request',
        'req/s (slowest–fastest)',
        'p50 ms',
        'p99 ms',
        'errors',
        'app µs/req',
        'PostgreSQL µs/req',
        'other CPU',
      ],
      Object.values(summary).map((s) => [
        s.name,
        `${fmt(s.rps, 0)} (${fmt(s.minRps, 0)}–${fmt(s.maxRps, 0)})`,
        fmt(s.p50Ms, 2),
        fmt(s.p99Ms, 2),
        s.errors,
        fmt(s.appUs, 0),
        fmt(s.postgresUs, 0),
        `≤ ${fmt(s.otherCpu, 0)} %`,
      ]),
    ),
  );

  const goals = [];
  const goal = (comparison, a, b, target = GOAL) => {
    const r = ratio(summary[a].rps, summary[b].rps);
    const met = r !== null && r >= target;
    // CPU per request barely depends on what else runs: the figure to read on a busy machine.
    const cpu = (key) => summary[key].appUs + summary[key].postgresUs;
    const cpuRatio = ratio(cpu(a), cpu(b));
    goals.push({
      comparison,
      ratio: round(r, 3),
      cpuRatio: round(cpuRatio, 3),
      goal: `≥ ${target}×`,
      met,
    });
    return [
      comparison,
      `${fmt(r, 2)}× (${fmt(summary[a].rps, 0)} / ${fmt(summary[b].rps, 0)})`,
      `${fmt(summary[a].p99Ms, 1)} / ${fmt(summary[b].p99Ms, 1)}`,
      `${fmt(cpuRatio, 2)}× (${fmt(cpu(a), 0)} / ${fmt(cpu(b), 0)} µs)`,
      `≥ ${target}×`,
      met ? 'pass' : 'FAIL',
    ];
  };
  const [small, middle, large] = groups.map(({ size }) => `groupPatch${size}`);
  const rows = [
    goal('SCIM `userName eq` filter ÷ REST read by id', 'scimFilter', 'restById'),
    goal('SCIM create ÷ REST create', 'scimCreate', 'restCreate'),
    goal(
      `group PATCH: ${GROUP_SIZES[1].toLocaleString('en-US')} members ÷ ${GROUP_SIZES[0]}`,
      middle,
      small,
    ),
    goal(
      `group PATCH: ${GROUP_SIZES[2].toLocaleString('en-US')} members ÷ ${GROUP_SIZES[0]}`,
      large,
      small,
    ),
  ];
  for (const [attribute, plans] of Object.entries(explains)) {
    // The service's statement scans the function; the function's statement, the index.
    const lookups = plans.filter((p) => p.role === 'lookup');
    const met = lookups.every((p) => p.usesIndex) && !plans.some((p) => p.seqScan);
    goals.push({ comparison: `${attribute} eq plan`, index: INDEXES[attribute], met });
    rows.push([
      `\`${attribute} eq\` plans (the page, the function's statement)`,
      plans
        .map(
          (p) =>
            `${p.role}: ${p.usesIndex ? 'index' : 'no index'}${p.seqScan ? ', Seq Scan' : ''}, ${fmt(p.executionMs, 3)} ms`,
        )
        .join('; '),
      '–',
      '–',
      `${INDEXES[attribute]}, no Seq Scan`,
      met ? 'pass' : 'FAIL',
    ]);
  }
  console.log(
    '\nGoals (medians of the repetitions; p99 in ms and CPU per request, app + PostgreSQL, this ÷ that):\n',
  );
  console.log(table(['comparison', 'req/s ratio', 'p99', 'CPU per request', 'goal', ''], rows));
  for (const g of goals) {
    console.log(
      g.ratio === undefined
        ? `${g.comparison}: ${g.met ? 'pass' : 'FAIL'} (${g.index})`
        : `${g.comparison}: ${fmt(g.ratio, 2)}× (goal ${g.goal}) ${g.met ? 'pass' : 'FAIL'}; ` +
            `CPU per request ${fmt(g.cpuRatio, 2)}×`,
    );
  }

  console.log(
    `\nQuery plans of the statements the service sent (pg_stat_statements), on ${settings.users.toLocaleString('en-US')} users after ANALYZE:`,
  );
  for (const [attribute, plans] of Object.entries(explains)) {
    for (const p of plans) {
      console.log(`\n\`${attribute} eq\`: ${p.statement.replace(/\s+/g, ' ')}\n`);
      console.log(p.lines.map((line) => `    ${line}`).join('\n'));
    }
  }
  const noisy = Object.values(summary).filter((s) => s.otherCpu > 10);
  if (noisy.length > 0) {
    console.log(
      `\nWarning: other jobs used more than 10% of the CPU during ${noisy.map((s) => s.name).join(', ')}: ` +
        'those figures are noisy.',
    );
  }
  return goals;
}
