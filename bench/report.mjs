// The benchmark's report: per endpoint and target, the median of the repetitions and their spread
// (min–max) of req/s, the median p50 and p99, the ratios service ÷ baseline, service ÷ Express
// ceiling and service ÷ NestJS sample (and service ÷ the compared build, with --compare), and the
// CPU per request; as markdown on stdout and as JSON for bench/results/.
import { fmt, median, ratio, round, table } from './format.mjs';

/** The repetitions of one (target, endpoint) pair reduced to medians and a spread. */
export function summarize(runs = []) {
  if (runs.length === 0) return {};
  const rps = runs.map((run) => run.rps);
  const cpu = (part) => median(runs.map((run) => run.cpuUs?.[part]));
  return {
    runs: runs.length,
    rps: median(rps),
    rpsMin: Math.min(...rps),
    rpsMax: Math.max(...rps),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    // The noisiest repetition decides whether the figure is trustworthy.
    otherCpuPct: Math.max(...runs.map((run) => run.otherCpuPct).filter(Number.isFinite)),
    cpuUs: { app: cpu('app'), postgres: cpu('postgres'), load: cpu('load') },
  };
}

/**
 * gRPC's goal: ≥ 0.85× the grpc-js floor's req/s (bench/baseline/grpc-floor.mjs: grpc-js,
 * proto-loader and a pg pool, nothing else) with p99 ≤ 1.25× its p99.
 */
function grpcMeetsGoal(entry) {
  const p99Ratio = ratio(entry.p99Ms, entry.baselineP99Ms);
  return entry.ratio >= 0.85 && p99Ratio !== null && p99Ratio <= 1.25;
}

/**
 * The goals on this two-core machine (bench/README.md, "Reading the results"): every HTTP
 * endpoint at ≥ 0.85× the Express 5 ceiling's req/s (reads also with p99 ≤ 1.5× its p99), gRPC
 * at ≥ 0.85× the grpc-js floor with p99 ≤ 1.25× its p99, and no errors anywhere. Rows without a
 * counterpart (a 304, a keyed create) only need no errors.
 */
function targetCheck(entry) {
  const ok = (pass, goal) => `${pass && entry.errors === 0 ? 'pass' : 'FAIL'} (${goal})`;
  if (entry.name.startsWith('gRPC')) return ok(grpcMeetsGoal(entry), '≥0.85× floor, p99 ≤1.25×');
  if (entry.serviceToExpress === null) return entry.errors === 0 ? 'no errors' : 'FAIL (errors)';
  if (entry.name.startsWith('POST')) return ok(entry.serviceToExpress >= 0.85, '≥0.85× Express');
  const p99Ratio = ratio(entry.p99Ms, entry.expressP99Ms);
  return ok(
    entry.serviceToExpress >= 0.85 && p99Ratio !== null && p99Ratio <= 1.5,
    '≥0.85× Express, p99 ≤1.5×',
  );
}

/**
 * One JSON entry per endpoint measured on the service or the baseline; with a compared build
 * (--compare), its `compare*` fields too.
 */
export function entries(list, results) {
  return list
    .filter((endpoint) => results.service?.[endpoint.key] ?? results.baseline?.[endpoint.key])
    .map((endpoint) => {
      const service = summarize(results.service?.[endpoint.key]);
      const baseline = summarize(results.baseline?.[endpoint.key]);
      const bare = summarize(results.express?.[endpoint.key]);
      const sample = summarize(results['nest-sample']?.[endpoint.key]);
      const compared = summarize(results.compared?.[endpoint.key]);
      const entry = {
        name: endpoint.name,
        repetitions: service.runs ?? baseline.runs ?? 0,
        rps: round(service.rps, 1),
        rpsMin: round(service.rpsMin, 1),
        rpsMax: round(service.rpsMax, 1),
        baselineRps: round(baseline.rps, 1),
        baselineRpsMin: round(baseline.rpsMin, 1),
        baselineRpsMax: round(baseline.rpsMax, 1),
        ratio: round(ratio(service.rps, baseline.rps), 3),
        p50Ms: round(service.p50Ms, 3),
        p99Ms: round(service.p99Ms, 3),
        errors: service.errors ?? null,
        baselineP50Ms: round(baseline.p50Ms, 3),
        baselineP99Ms: round(baseline.p99Ms, 3),
        baselineErrors: baseline.errors ?? null,
        // The Express 5 ceiling (bench/baseline/express-server.mjs): HTTP only.
        expressRps: round(bare.rps, 1),
        expressRpsMin: round(bare.rpsMin, 1),
        expressRpsMax: round(bare.rpsMax, 1),
        expressRatio: round(ratio(bare.rps, baseline.rps), 3),
        expressP99Ms: round(bare.p99Ms, 3),
        serviceToExpress: round(ratio(service.rps, bare.rps), 3),
        // The NestJS sample's shape (bench/baseline/nest-sample.mjs): HTTP reads only.
        sampleRps: round(sample.rps, 1),
        sampleRpsMin: round(sample.rpsMin, 1),
        sampleRpsMax: round(sample.rpsMax, 1),
        sampleP99Ms: round(sample.p99Ms, 3),
        sampleErrors: sample.errors ?? null,
        serviceToSample: round(ratio(service.rps, sample.rps), 3),
        // The other build of the service (--compare): only when it ran.
        ...(results.compared && {
          compareRps: round(compared.rps, 1),
          compareRpsMin: round(compared.rpsMin, 1),
          compareRpsMax: round(compared.rpsMax, 1),
          compareP99Ms: round(compared.p99Ms, 3),
          compareErrors: compared.errors ?? null,
          serviceToCompare: round(ratio(service.rps, compared.rps), 3),
        }),
      };
      // Shown in the tables, not stored: CPU taken by other jobs, and CPU per request.
      return Object.defineProperties(entry, {
        other: {
          value: [service, baseline, bare, sample, compared].map((s) => s.otherCpuPct),
          enumerable: false,
        },
        cpu: {
          value: {
            service: service.cpuUs,
            baseline: baseline.cpuUs,
            sample: sample.cpuUs,
            compared: compared.cpuUs,
          },
          enumerable: false,
        },
      });
    });
}

const spread = (median, min, max, digits = 0) =>
  median === null ? '–' : `${fmt(median, digits)} (${fmt(min, digits)}–${fmt(max, digits)})`;
const times = (r) => (r === null ? '–' : `${r.toFixed(2)}×`);
const bold = (r) => (r === null ? '–' : `**${r.toFixed(2)}×**`);

/**
 * The throughput and latency table, and the CPU-per-request table, as markdown. `compared` is the
 * label of the other build (--compare), when one ran: its columns follow the sample's, with the
 * ratio service ÷ compared (req/s; app CPU per request in the CPU table).
 */
export function markdown(rows, { compared } = {}) {
  // The compared build's cells, only when it ran (computed only then: its fields exist only then).
  const also = (cells) => (compared ? cells() : []);
  const last = compared ? `, ${compared}` : '';
  const throughput = table(
    [
      'endpoint',
      'service req/s median (min–max)',
      'baseline req/s',
      'Express 5 ceiling req/s',
      'NestJS sample req/s',
      ...also(() => [`${compared} req/s`]),
      'service ÷ baseline',
      'service ÷ Express',
      'service ÷ sample',
      ...also(() => [`service ÷ ${compared}`]),
      `p99 ms median: service (baseline, Express, sample${last})`,
      'p50 ms: service (baseline)',
      `errors (baseline, sample${last})`,
      `other CPU % max (baseline, Express, sample${last})`,
      'target',
    ],
    rows.map((e) => [
      `\`${e.name}\``,
      spread(e.rps, e.rpsMin, e.rpsMax),
      spread(e.baselineRps, e.baselineRpsMin, e.baselineRpsMax),
      spread(e.expressRps, e.expressRpsMin, e.expressRpsMax),
      spread(e.sampleRps, e.sampleRpsMin, e.sampleRpsMax),
      ...also(() => [spread(e.compareRps, e.compareRpsMin, e.compareRpsMax)]),
      bold(e.ratio),
      bold(e.serviceToExpress),
      bold(e.serviceToSample),
      ...also(() => [bold(e.serviceToCompare)]),
      `${fmt(e.p99Ms, 2)} (${fmt(e.baselineP99Ms, 2)}, ${fmt(e.expressP99Ms, 2)}, ${fmt(e.sampleP99Ms, 2)}` +
        `${compared ? `, ${fmt(e.compareP99Ms, 2)}` : ''})`,
      `${fmt(e.p50Ms, 2)} (${fmt(e.baselineP50Ms, 2)})`,
      `${e.errors ?? '–'} (${e.baselineErrors ?? '–'}, ${e.sampleErrors ?? '–'}` +
        `${compared ? `, ${e.compareErrors ?? '–'}` : ''})`,
      `${fmt(e.other[0], 0)} (${fmt(e.other[1], 0)}, ${fmt(e.other[2], 0)}, ${fmt(e.other[3], 0)}` +
        `${compared ? `, ${fmt(e.other[4], 0)}` : ''})`,
      e.ratio === null && e.serviceToExpress === null ? '–' : targetCheck(e),
    ]),
  );
  const cpu = (e, kind, part) => e.cpu[kind]?.[part];
  const cpuTable = table(
    [
      'endpoint',
      'app CPU µs/req',
      'baseline app',
      'app ×',
      'NestJS sample app',
      'app × sample',
      ...also(() => [`${compared} app`, `app × ${compared}`]),
      'PostgreSQL µs/req (baseline)',
      'load generator µs/req (baseline)',
    ],
    rows.map((e) => [
      `\`${e.name}\``,
      fmt(cpu(e, 'service', 'app'), 0),
      fmt(cpu(e, 'baseline', 'app'), 0),
      times(ratio(cpu(e, 'service', 'app'), cpu(e, 'baseline', 'app'))),
      fmt(cpu(e, 'sample', 'app'), 0),
      times(ratio(cpu(e, 'service', 'app'), cpu(e, 'sample', 'app'))),
      ...also(() => [
        fmt(cpu(e, 'compared', 'app'), 0),
        times(ratio(cpu(e, 'service', 'app'), cpu(e, 'compared', 'app'))),
      ]),
      `${fmt(cpu(e, 'service', 'postgres'), 0)} (${fmt(cpu(e, 'baseline', 'postgres'), 0)})`,
      `${fmt(cpu(e, 'service', 'load'), 0)} (${fmt(cpu(e, 'baseline', 'load'), 0)})`,
    ]),
  );
  return { throughput, cpu: cpuTable };
}

/**
 * "endpoint/target N%" for every run where other jobs took more than 10% of the CPU; a target is
 * named by its label in `labels` (the compared build's), or else by its kind.
 */
export function noisyRuns(list, results, labels = {}) {
  return list.flatMap((e) =>
    Object.entries(results).flatMap(([kind, byKey]) =>
      (byKey[e.key] ?? [])
        .map((run, i) => [i + 1, run.otherCpuPct])
        .filter(([, pct]) => pct > 10)
        .map(([rep, pct]) => `${e.key}/${labels[kind] ?? kind} #${rep} ${fmt(pct, 0)}%`),
    ),
  );
}

/** The reads the goals hold for: by id, a role's list page, a user's posts (not the probe). */
const READS = [
  'GET /users/:id',
  'GET /users?role=…&sort=-createdAt&limit=20',
  'GET /users/:id/posts',
];

/**
 * The performance goals of a run, one row each with its figure and pass/FAIL (bench/README.md,
 * "Reading the results"): each HTTP read at ≥ 1.0× the NestJS sample's req/s with p99 ≤ 1.0× its
 * p99 (and, a stretch, ≥ 0.85× the Express ceiling), gRPC at ≥ 0.85× the grpc-js floor with p99 ≤ 1.25×,
 * a keyed create at ≥ 0.8× a create without a key. A goal whose rows did not run is left out;
 * authentication on ÷ off is measured by `--auth`.
 */
export function goalsTable(rows) {
  const byName = new Map(rows.map((e) => [e.name, e]));
  const reads = READS.map((name) => byName.get(name)).filter((e) => e?.rps != null);
  const verdict = (pass) => (pass ? 'pass' : 'FAIL');
  const lines = [];
  for (const e of reads) {
    if (e.sampleRps !== null) {
      const p99 = ratio(e.p99Ms, e.sampleP99Ms);
      lines.push([
        `\`${e.name}\` ÷ NestJS sample`,
        `${times(e.serviceToSample)}, p99 ${times(p99)}`,
        '≥ 1.0×, p99 ≤ 1.0×',
        verdict(e.serviceToSample >= 1 && p99 !== null && p99 <= 1 && e.errors === 0),
      ]);
    }
  }
  for (const e of reads) {
    if (e.serviceToExpress !== null) {
      lines.push([
        `\`${e.name}\` ÷ Express 5 (stretch)`,
        times(e.serviceToExpress),
        '≥ 0.85×',
        verdict(e.serviceToExpress >= 0.85),
      ]);
    }
  }
  const grpc = byName.get('gRPC GetUser');
  if (grpc?.ratio != null) {
    const p99 = ratio(grpc.p99Ms, grpc.baselineP99Ms);
    lines.push([
      '`gRPC GetUser` ÷ grpc-js floor',
      `${times(grpc.ratio)}, p99 ${times(p99)}`,
      '≥ 0.85×, p99 ≤ 1.25×',
      verdict(grpcMeetsGoal(grpc) && grpc.errors === 0),
    ]);
  }
  const keyed = byName.get('POST /users with Idempotency-Key');
  const plain = byName.get('POST /users');
  const keyedRatio = ratio(keyed?.rps, plain?.rps);
  if (keyedRatio !== null) {
    lines.push([
      '`POST /users` with ÷ without `Idempotency-Key`',
      times(keyedRatio),
      '≥ 0.8×',
      verdict(keyedRatio >= 0.8 && keyed.errors === 0),
    ]);
  }
  return lines.length === 0
    ? ''
    : table(['comparison', 'measured (medians)', 'goal', 'verdict'], lines);
}
