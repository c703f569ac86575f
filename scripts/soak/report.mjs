// The soak's report: a line per interval while it runs, then the summary and its verdict.
import os from 'node:os';
import { percentile } from '../lib/measure.mjs';

const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** One line per interval: throughput, errors, latency percentiles, memory and machine load. */
export function printInterval(interval, { options, log }) {
  const http = [...interval.http].sort((a, b) => a - b);
  const grpcMs = [...interval.grpc].sort((a, b) => a - b);
  const errors = interval.errorCount;
  const phase = interval.startS < options.warmupS ? ' (warm-up)' : '';
  log(
    [
      `${String(interval.startS).padStart(5)} s`,
      `${String(interval.count).padStart(6)} req`,
      `${fmt(interval.count / options.intervalS, 0).padStart(5)}/s`,
      `${String(errors).padStart(4)} err`,
      `HTTP p50 ${fmt(percentile(http, 50))} p99 ${fmt(percentile(http, 99))} max ${fmt(http.at(-1))} ms`,
      `gRPC p50 ${fmt(percentile(grpcMs, 50))} p99 ${fmt(percentile(grpcMs, 99))} ms`,
      `RSS ${fmt(Math.max(...interval.rssMb))} MB`,
      `heap ${fmt(Math.min(...interval.heapMb))}..${fmt(Math.max(...interval.heapMb))} MB`,
      `load ${fmt(Math.max(...interval.load), 2)}${phase}`,
    ].join('  '),
  );
  if (errors) log(`        errors: ${JSON.stringify(interval.errors)}`);
}

/**
 * Prints the summary of a run and returns its failures (none: it passed): any error, heap growth
 * beyond the limit, or a service that did not exit 0.
 */
export function summarize({ intervals, sent, durationS, exit }, { options, log }) {
  const measured = intervals.filter((interval) => interval.startS >= options.warmupS);
  const errors = intervals.reduce((sum, interval) => sum + interval.errorCount, 0);
  // Start and end: the first and the last fifth of the measured time (at least one interval
  // each). The heap is compared by its floor (the lowest sample, after a GC), RSS by its peak.
  const span = Math.max(1, Math.floor(measured.length / 5));
  const head = measured.length ? measured.slice(0, span) : intervals.slice(0, 1);
  const tail = measured.length ? measured.slice(-span) : intervals.slice(-1);
  const floor = (stretch) => Math.min(...stretch.flatMap((interval) => interval.heapMb));
  const peak = (stretch) => Math.max(...stretch.flatMap((interval) => interval.rssMb));
  const heapGrowthMb = floor(tail) - floor(head);
  const rssStart = peak(head);
  const rssEnd = peak(tail);
  const allHttp = measured.flatMap((interval) => interval.http).sort((a, b) => a - b);
  const allGrpc = measured.flatMap((interval) => interval.grpc).sort((a, b) => a - b);
  const loads = intervals.flatMap((interval) => interval.load);

  log('\nsummary');
  log(
    `  requests sent        ${sent} in ${fmt(durationS)} s, warm-up included (${fmt(sent / durationS)}/s)`,
  );
  log(`  errors               ${errors}`);
  log(
    `  HTTP latency         p50 ${fmt(percentile(allHttp, 50))}  p99 ${fmt(percentile(allHttp, 99))}  max ${fmt(allHttp.at(-1))} ms`,
  );
  log(
    `  gRPC latency         p50 ${fmt(percentile(allGrpc, 50))}  p99 ${fmt(percentile(allGrpc, 99))}  max ${fmt(allGrpc.at(-1))} ms`,
  );
  log(
    `  RSS peak             ${fmt(rssStart)} MB -> ${fmt(rssEnd)} MB (${fmt(rssEnd - rssStart)} MB)`,
  );
  log(`  (start and end: the first and last ${span * options.intervalS} s of the measured time)`);
  log(
    `  machine load         ${fmt(Math.min(...loads), 2)}..${fmt(Math.max(...loads), 2)} (1-min average, ${os.cpus().length} cores)`,
  );
  log(
    `  heap floor           ${fmt(floor(head))} MB -> ${fmt(floor(tail))} MB (${fmt(heapGrowthMb)} MB; limit ${options.maxHeapGrowthMb} MB)`,
  );
  log(`  service exit         ${JSON.stringify(exit)}`);

  const failures = [];
  if (errors > 0) failures.push(`${errors} errors`);
  if (heapGrowthMb > options.maxHeapGrowthMb) failures.push(`heap grew ${fmt(heapGrowthMb)} MB`);
  if (exit.code !== 0) failures.push(`the service exited ${JSON.stringify(exit)}`);
  return failures;
}
