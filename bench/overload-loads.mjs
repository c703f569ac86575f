// The loads of `npm run bench -- --overload` (bench/overload.mjs), each resolving with the
// figures of one row of its report: goodput (2xx, gRPC OK, answered within 250 ms, per second),
// the p99 of admitted requests, the p50 and p99 of rejections (503s) and what became of the
// requests. The capacity run from wrk, the open loop from bench/load/openloop/, the closed-loop
// floods from hey, the gRPC spikes from h2load.
import { h2loadGrpcLoad } from './load/h2load.mjs';
import { heyFlood } from './load/hey.mjs';
import { openLoop } from './load/openloop.mjs';
import { wrkLoad } from './load/wrk.mjs';

export const CAPACITY_CALLERS = 50;
const USER = { key: 'user', name: 'GET /users/:id' };
/** The codes of a shed gRPC call (not DEADLINE_EXCEEDED: that one comes late). */
const SHED_CODES = ['UNAVAILABLE', 'RESOURCE_EXHAUSTED'];
const sum = (values) => values.reduce((total, n) => total + n, 0);

/** GET /users/:id from 50 keep-alive callers: the capacity is its answered req/s. */
export async function capacityLoad(target, { users, durationS }) {
  const result = await wrkLoad(target, USER, {
    durationS,
    connections: CAPACITY_CALLERS,
    users,
    seed: 7,
    maxRequests: 10_000_000,
  });
  return {
    goodputPerS: result.rps,
    admittedP99Ms: result.p99Ms,
    outcome: { sent: result.count + result.errors, ok: result.count, other: result.errors },
  };
}

/** The outcome counts of an open-loop summary (bench/load/openloop/stats.go). */
function openLoopOutcome(total, counted) {
  const statuses = Object.entries(total.statuses).map(([s, n]) => [Number(s), n]);
  const count = (pass) => sum(statuses.filter(([s]) => pass(s)).map(([, n]) => n));
  return {
    sent: total.sent,
    ok: count((s) => s >= 200 && s < 300),
    good: sum(counted.map((c) => c.good)),
    shed: count((s) => s === 503),
    other: count((s) => s < 200 || (s >= 300 && s !== 503)),
    timeouts: total.timeouts,
    connectionErrors: total.connectionErrors,
  };
}

/**
 * Arrivals at `rate` per second whatever the answers, over at most `conns` connections; with
 * `mix`, of several classes, the long polls following the feed from the service's newest token.
 */
export async function openLoopLoad(binary, target, { rate, durationS, conns, users, mix, tag }) {
  const feedToken = mix
    ? (await fetch(`${target.url}/users?limit=1`)).headers.get('changes-token')
    : '';
  const summary = await openLoop(binary, {
    base: target.url,
    rate,
    durationS,
    conns,
    users,
    mix,
    feedToken,
    tag,
  });
  // The long polls wait by design: goodput counts the other classes.
  const counted = Object.entries(summary.classes)
    .filter(([name]) => name !== 'feed')
    .map(([, c]) => c);
  return {
    goodputPerS: sum(counted.map((c) => c.good)) / durationS,
    admittedP99Ms: (summary.classes.read ?? summary.total).okP99Ms ?? NaN,
    shedP50Ms: summary.total.shedP50Ms ?? NaN,
    shedP99Ms: summary.total.shedP99Ms ?? NaN,
    outcome: openLoopOutcome(summary.total, counted),
    generatorCpuS: summary.cpuS,
    detail: summary,
  };
}

/** `callers` closed-loop callers of GET /users/`id`, each sending again once answered. */
export async function floodLoad(target, { id, callers, durationS }) {
  const flood = await heyFlood({ url: `${target.url}/users/${id}`, callers, durationS });
  const ok = flood.statuses[200] ?? 0;
  const shed = flood.statuses[503] ?? 0;
  return {
    goodputPerS: flood.goodputPerS,
    admittedP99Ms: flood.okP99Ms,
    shedP50Ms: flood.shedP50Ms,
    shedP99Ms: flood.shedP99Ms,
    outcome: {
      ok,
      good: flood.good,
      shed,
      other: flood.answered - ok - shed,
      timeouts: `≈ ${flood.timeoutsEstimate.toLocaleString('en')}`,
    },
  };
}

/**
 * GetUser on `clients` HTTP/2 connections × 1,000 streams, each call with a 2 s grpc-timeout
 * (the service can drop calls whose caller has given up). h2load sees HTTP 200 for a rejected
 * call too (its grpc-status is in the trailers): grpcGoodput takes the calls the service shed off
 * afterwards, from its metrics.
 */
export async function grpcSpikeLoad(target, { clients, id, durationS }) {
  const result = await h2loadGrpcLoad({
    address: target.grpcAddress,
    clients,
    connections: 1000,
    durationMs: durationS * 1000,
    id,
    deadlineMs: 2000,
    unansweredOk: true,
  });
  return {
    within: result.within,
    admittedP99Ms: result.p99Ms,
    shedNote: 'not visible to h2load',
    outcome: {
      sent: result.started,
      ok: result.count,
      other: result.errors,
      // h2load has no deadline of its own: calls still open when it stopped.
      timeouts: result.started - result.count - result.errors,
    },
    detail: { errorCodes: result.errorCodes },
  };
}

/** A gRPC row's goodput: 200s within 250 ms minus the calls shed (a lower bound). */
export function grpcGoodput(row) {
  const rejected = Math.max(
    sum(SHED_CODES.map((code) => row.getUserCodes[code] ?? 0)),
    sum(
      Object.entries(row.rejected)
        .filter(([key]) => key.startsWith('grpc/'))
        .map(([, n]) => n),
    ),
  );
  const good = Math.max(0, row.within - rejected);
  return {
    ...row,
    goodputPerS: good / row.durationS,
    goodputNote: rejected > 0 ? ' (≥)' : '',
    outcome: {
      ...row.outcome,
      good,
      shed: rejected,
      // What the service answered, by code: h2load only sees HTTP 200.
      other: [
        ...Object.entries(row.getUserCodes)
          .filter(([code, n]) => code !== 'OK' && n > 0)
          .map(([code, n]) => `${code} ${n}`),
        ...(row.outcome.other > 0 ? [`h2load errors ${row.outcome.other}`] : []),
      ].join(', '),
    },
  };
}
