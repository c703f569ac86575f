// The report of `npm run bench -- --overload`: the main table (one row per run: goodput ÷
// capacity, admitted p99, rejections, probes, memory, recovery, the load generator's CPU), the
// outcomes of each run, the mixed spike per class, and the JSON document saved under
// bench/results/.
import { fmt, ratio, round, secs, table } from './format.mjs';

const MB = 1024 * 1024;
const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en') : '–');
const ms = (n) => (Number.isFinite(n) ? `${fmt(n, n < 10 ? 1 : 0)} ms` : '–');
const sum = (values) => values.reduce((total, n) => total + (n ?? 0), 0);

function probesCell({ liveness, readiness }) {
  if (!liveness.sent) return '–';
  return liveness.failed + readiness.failed === 0
    ? `0 of ${liveness.sent + readiness.sent}`
    : `liveness ${liveness.failed} of ${liveness.sent}, readiness ${readiness.failed} of ${readiness.sent}`;
}

/** The main table, like the one the measurement asks for. */
export function mainTable(rows, capacity) {
  const capacityRss = rows[0]?.peakRssBytes;
  return table(
    [
      'run',
      'offered',
      'goodput ÷ capacity',
      'admitted p99',
      'rejection p50 / p99',
      'probes failed',
      'worst probe',
      'peak RSS ÷ capacity RSS',
      'recovery',
      'load generator CPU',
    ],
    rows.map((row) =>
      row.error
        ? [
            row.name,
            row.offered,
            `failed: ${row.error.split('\n')[0].slice(0, 120)}`,
            ...Array(7).fill(''),
          ]
        : [
            row.name,
            row.offered,
            `${fmt(ratio(row.goodputPerS, capacity), 2)}${row.goodputNote ?? ''}`,
            ms(row.admittedP99Ms),
            Number.isFinite(row.shedP50Ms)
              ? `${ms(row.shedP50Ms)} / ${ms(row.shedP99Ms)}`
              : (row.shedNote ?? 'none'),
            probesCell(row.probes),
            ms(Math.max(row.probes.liveness.worstMs, row.probes.readiness.worstMs)),
            `${fmt(ratio(row.peakRssBytes, capacityRss), 2)} (${int(row.peakRssBytes / MB)} MB)`,
            row.recoveryMs === null ? '> 10 s' : ms(row.recoveryMs),
            `${fmt(row.loadCpuS, 1)} s (${fmt((100 * row.loadCpuS) / row.durationS, 0)} % of a core)`,
          ],
    ),
  );
}

/** What became of the requests of each run. */
export function outcomesTable(rows) {
  return table(
    [
      'run',
      'sent',
      '2xx',
      'good (2xx ≤ 250 ms)',
      '503',
      'other statuses (gRPC: codes)',
      'timeouts',
      'connection errors',
      'rejected (metric)',
      'service CPU',
      'other CPU',
    ],
    rows
      .filter((row) => !row.error)
      .map(({ name, outcome: o, rejected, serviceCpuS, otherCpuPct }) => [
        name,
        int(o.sent),
        int(o.ok),
        int(o.good),
        int(o.shed),
        typeof o.other === 'string' ? o.other || '0' : int(o.other),
        Number.isFinite(o.timeouts) ? int(o.timeouts) : (o.timeouts ?? '–'),
        int(o.connectionErrors),
        int(sum(Object.values(rejected))),
        `${fmt(serviceCpuS, 1)} s`,
        `${fmt(otherCpuPct, 0)} %`,
      ]),
  );
}

/** The mixed spike per class: what was answered, what was shed, what the service counted. */
export function mixedTable(row) {
  const classes = row.detail?.classes ?? {};
  return table(
    [
      'class',
      'offered',
      'sent',
      '2xx',
      'good (≤ 250 ms)',
      '503 (shed)',
      'timeouts',
      'connection errors',
      'rejected (metric)',
      '2xx p99',
    ],
    ['feed', 'list', 'read', 'create'].map((name) => {
      const c = classes[name] ?? {};
      const statuses = c.statuses ?? {};
      const ok = sum(
        Object.entries(statuses)
          .filter(([s]) => s >= 200 && s < 300)
          .map(([, n]) => n),
      );
      return [
        name === 'feed' ? 'feed (long polls)' : name,
        int(c.offered),
        int(c.sent),
        int(ok),
        name === 'feed' ? '–' : int(c.good),
        int(statuses[503] ?? 0),
        int(c.timeouts),
        int(c.connectionErrors),
        int(
          sum(
            Object.entries(row.rejected)
              .filter(([k]) => k.endsWith(`/${name === 'create' ? 'write' : name}`))
              .map(([, n]) => n),
          ),
        ),
        ms(c.okP99Ms),
      ];
    }),
  );
}

/** The JSON document of a run (bench/results/overload-latest.json). */
export function document(rows, { capacity, options, node }) {
  return {
    date: new Date().toISOString(),
    mode: options.quick ? 'quick' : 'full',
    durationS: options.durationS,
    users: options.users,
    openLoopConnections: options.connections,
    node: node?.version ?? process.version,
    capacityPerS: round(capacity, 0),
    runs: rows.map(({ detail, ...row }) => ({
      ...row,
      goodputRatio: round(ratio(row.goodputPerS, capacity), 3),
      ...(detail?.series && { series: detail.series }),
      ...(detail?.classes && { classes: detail.classes }),
    })),
  };
}

/** Prints the three tables and what their figures mean. */
export function printReport(rows, capacity, { options, node, wall, mix }) {
  console.log(
    `\n## Overload: GET /users/:id and GetUser beyond capacity (${options.quick ? 'quick' : 'full'}: ` +
      `${options.users} users, ${options.durationS} s per run, open loop over at most ` +
      `${options.connections} connections; capacity ${fmt(capacity, 0)} req/s at 50 callers; the ` +
      `service on Node ${node?.version ?? process.version}; wall ${secs(wall)} s)\n`,
  );
  console.log(mainTable(rows, capacity));
  console.log(
    '\nWhat became of the requests (503: shed; rejected: overload_rejected_total moved):\n',
  );
  console.log(outcomesTable(rows));
  const noisy = rows.filter((row) => row.otherCpuPct > 10).map((row) => row.name);
  if (noisy.length > 0) {
    console.log(
      `\nWarning: other jobs used more than 10% of the CPU during ${noisy.join(', ')}: those ` +
        'figures are noisy (re-run on an idle machine, or with --wait-idle 60).',
    );
  }
  const mixed = rows.find((row) => row.name.startsWith('mixed') && !row.error);
  if (mixed) {
    console.log(`\nMixed spike per class (${mix}; its goodput counts read, list and create):\n`);
    console.log(mixedTable(mixed));
  }
  console.log(
    '\nGoodput: 2xx (gRPC: OK) answered within 250 ms, per second, ÷ capacity. Admitted p99: 2xx ' +
      'of GET /users/:id (gRPC: every HTTP 200, rejections included). Closed-loop timeouts are ' +
      "estimated (hey's CSV lists answered requests only). gRPC goodput (≥): 200s within 250 ms " +
      'minus the calls the service counted as shed (UNAVAILABLE, RESOURCE_EXHAUSTED or overload_rejected_total).' +
      ' Load generator CPU: user + system of wrk, the open-loop generator, hey or h2load. Service ' +
      'CPU: its process during the load; other CPU: jobs this benchmark did not start, % of all cores.',
  );
}
