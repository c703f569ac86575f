// HTTP load from wrk (Debian package `wrk`), the default when it is installed: a C load generator
// costs the two shared cores far less than autocannon in Node. Closed loop, N keep-alive
// connections; the Lua script (wrk-requests.lua) builds the requests, counts answers by status
// and stops each thread at its share of the request budget. Latency percentiles come from wrk's
// own `--latency` distribution (p50, p75, p90, p99). The runs of `--auth` (wrk-auth.lua: a
// bearer token per connection) go through the same runner.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { BENCH_POST_ROLE, ROLES } from '../seed.mjs';
import { succeeded } from './autocannon.mjs';
import { runToEnd } from './run-to-end.mjs';

const REQUESTS_SCRIPT = path.join(import.meta.dirname, 'wrk-requests.lua');
const AUTH_SCRIPT = path.join(import.meta.dirname, 'wrk-auth.lua');

/** The wrk binary on PATH, or undefined. */
export function findWrk() {
  try {
    return execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const UNITS_MS = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "1.23ms" -> 1.23; NaN when wrk printed something else. */
function milliseconds(text) {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text ?? '');
  return match ? Number(match[1]) * UNITS_MS[match[2]] : NaN;
}

/** The figures of wrk's text report and of the script's `wrk-statuses` line. */
export function parseWrkOutput(text) {
  // wrk pads one-letter units ("1.02s ") to the width of two-letter ones.
  const percentile = (p) =>
    milliseconds(new RegExp(`^\\s+${p}%\\s+(\\S+)\\s*$`, 'm').exec(text)?.[1]);
  const totals = /(\d+) requests in ([\d.]+)(us|ms|s|m|h)/.exec(text);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const statuses = JSON.parse(/^wrk-statuses (.*)$/m.exec(text)?.[1] ?? '{}');
  return {
    requests: Number(totals?.[1] ?? 0),
    durationS: totals ? milliseconds(`${totals[2]}${totals[3]}`) / 1000 : NaN,
    p50Ms: percentile(50),
    p90Ms: percentile(90),
    p99Ms: percentile(99),
    maxMs: milliseconds(/^\s+Latency\s+\S+\s+\S+\s+(\S+)/m.exec(text)?.[1]),
    statuses,
    socketErrors: socket
      ? { connect: +socket[1], read: +socket[2], write: +socket[3], timeout: +socket[4] }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
  };
}

/**
 * One wrk run against `base` (127.0.0.1 only) for `durationS` with `connections` keep-alive
 * connections on `threads` threads, requests from the Lua `script` given `scriptArgs`; killed
 * if it runs 30 s past its duration. Resolves with its parsed report.
 */
export async function runWrk({ base, threads, connections, durationS, script, scriptArgs }) {
  if (new URL(base).hostname !== '127.0.0.1') {
    throw new Error(`refusing to load ${base}: not 127.0.0.1`);
  }
  const args = [
    `-t${threads}`,
    `-c${connections}`,
    `-d${Math.max(1, Math.round(durationS))}s`,
    '--timeout',
    '10s',
    '--latency',
    '-s',
    script,
    base,
    '--',
    ...scriptArgs,
  ];
  const { exit: status, output } = await runToEnd('wrk', args, durationS);
  if (status.code !== 0) {
    throw new Error(`wrk ${args.join(' ')} ended ${JSON.stringify(status)}:\n${output}`);
  }
  const parsed = parseWrkOutput(output);
  if (!Number.isFinite(parsed.p99Ms) || !Number.isFinite(parsed.durationS)) {
    throw new Error(`wrk's report not understood:\n${output}`);
  }
  return parsed;
}

/**
 * One wrk run of `endpoint` against `target` for `durationS`, at most `maxRequests` answers.
 * Resolves with req/s of 2xx answers, percentiles and errors.
 */
export async function wrkLoad(
  target,
  endpoint,
  { durationS, connections, users, seed, maxRequests },
) {
  // On two cores one thread is plenty for wrk; more would take CPU from the target.
  const threads = Math.max(1, Math.min(4, Math.floor(os.cpus().length / 2), connections));
  const parsed = await runWrk({
    base: target.base,
    threads,
    connections,
    durationS,
    script: REQUESTS_SCRIPT,
    scriptArgs: [
      endpoint.key,
      String(users),
      String(seed),
      String(Math.ceil(maxRequests / threads)),
      `${Date.now().toString(36)}-${target.kind}`,
      ROLES.join(','),
      BENCH_POST_ROLE,
    ],
  });
  let ok = 0;
  let non2xx = 0;
  for (const [code, n] of Object.entries(parsed.statuses)) {
    if (succeeded(endpoint, Number(code))) ok += n;
    else non2xx += n;
  }
  const socketErrors = Object.values(parsed.socketErrors).reduce((sum, n) => sum + n, 0);
  return {
    count: ok,
    rps: ok / parsed.durationS,
    p50Ms: parsed.p50Ms,
    p90Ms: parsed.p90Ms,
    p99Ms: parsed.p99Ms,
    maxMs: parsed.maxMs,
    errors: non2xx + socketErrors,
    detail: { statuses: parsed.statuses, socketErrors: parsed.socketErrors },
  };
}

/**
 * One wrk run of `npm run bench -- --auth` (bench/auth.mjs): GET /users/:id on one thread, with a
 * bearer token per connection from `tokensFile` (wrk-auth.lua), or none. Resolves with wrk's
 * parsed report.
 */
export async function authLoad(target, { durationS, connections, users, tokensFile }) {
  if (!findWrk()) throw new Error('--auth needs wrk (Debian package wrk)');
  const threads = 1;
  return runWrk({
    base: target.base,
    threads,
    connections,
    durationS,
    script: AUTH_SCRIPT,
    scriptArgs: [String(users), '1', String(threads), ...(tokensFile ? [tokensFile] : [])],
  });
}
