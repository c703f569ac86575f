// The measurement plan: every (endpoint, target) pair measured in turn, the targets interleaved
// within each repetition (and their order rotated between repetitions), so that a slow phase of
// the shared machine lands on all of them instead of on one. Each run is bounded in time and in
// number of requests; its CPU cost is taken from /proc around it.
import { cpuPerRequest, cpuSnapshot, foreignCpu, waitIdle } from '../cpu.mjs';
import { fmt } from '../format.mjs';
import { measures } from '../targets.mjs';
import { runGrpcLoad } from './grpc.mjs';
import { findH2load, h2loadGrpcLoad } from './h2load.mjs';
import { autocannonLoad } from './autocannon.mjs';
import { findWrk, wrkLoad } from './wrk.mjs';

const MAX_REQUESTS_PER_RUN = 5_000_000;

/** 'wrk' when asked for, or when installed and not ruled out; 'autocannon' otherwise. */
export function chooseLoadGenerator(wanted) {
  if (wanted === 'autocannon') return 'autocannon';
  if (findWrk()) return 'wrk';
  if (wanted === 'wrk') throw new Error('--load-generator wrk: wrk is not installed');
  return 'autocannon';
}

/**
 * The gRPC load generator to pair with the HTTP one: h2load (C, Debian `nghttp2-client`) beside
 * wrk when it is installed, the grpc-js client of grpc.mjs otherwise.
 */
export function chooseGrpcLoadGenerator(generator) {
  return generator === 'wrk' && findH2load() ? 'h2load' : 'grpc-js';
}

/** One run of one endpoint on one target (HTTP through wrk or autocannon, gRPC through h2load or grpc-js). */
export async function load(generator, target, endpoint, { durationS, connections, users, seed }) {
  const bounds = { durationS, connections, users, seed, maxRequests: MAX_REQUESTS_PER_RUN };
  if (endpoint.grpc && chooseGrpcLoadGenerator(generator) === 'h2load') {
    const result = await h2loadGrpcLoad({
      address: target.grpcAddress,
      connections,
      durationMs: durationS * 1000,
      id: Math.ceil(users / 2),
    });
    return { ...result, detail: { errorCodes: result.errorCodes } };
  }
  if (endpoint.grpc) {
    const result = await runGrpcLoad({
      address: target.grpcAddress,
      connections,
      durationMs: durationS * 1000,
      maxCalls: MAX_REQUESTS_PER_RUN,
      maxId: users,
      seed,
    });
    return { ...result, detail: { errorCodes: result.errorCodes } };
  }
  return generator === 'wrk'
    ? wrkLoad(target, endpoint, bounds)
    : autocannonLoad(target, endpoint, bounds);
}

/** One measured run, with the CPU it cost and a check that the target survived it. */
async function measureRun(generator, target, endpoint, options) {
  const common = { connections: options.connections, users: options.users, seed: 7 };
  const before = cpuSnapshot(target.pid);
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const result = await load(generator, target, endpoint, {
    ...common,
    durationS: options.durationS,
  });
  result.window = [fromUs, Number(process.hrtime.bigint() / 1000n)];
  const after = cpuSnapshot(target.pid);
  result.otherCpuPct = foreignCpu(before, after);
  result.cpuUs = cpuPerRequest(before, after, result.count);
  if (!target.alive()) {
    const signalled = /SIGTERM|SIGINT/.test(target.output());
    throw new Error(
      `${target.label ?? target.kind} died during ${endpoint.name}` +
        (signalled ? ' (it received a signal this benchmark did not send)' : '') +
        `:\n${target.output().split('\n').slice(-40).join('\n')}`,
    );
  }
  return result;
}

/**
 * Measures every endpoint of `list` on every running target, `options.repetitions` times.
 * `afterWrites(target)` runs after each write run (to undo its rows), `afterRun` after every run
 * (the SQL statistics, when asked for). Resolves with results[kind][key] = [run, …].
 */
export async function measureInterleaved(
  targets,
  list,
  { options, generator, log, afterWrites, afterRun },
) {
  const results = Object.fromEntries(targets.map((t) => [t.kind, {}]));
  const label = (target) => target.label ?? target.kind;
  const width = Math.max(11, ...targets.map((t) => label(t).length));
  for (let rep = 1; rep <= options.repetitions; rep++) {
    const order = targets.map((_, i) => targets[(i + rep - 1) % targets.length]);
    log(`repetition ${rep} of ${options.repetitions}: ${order.map(label).join(', ')}`);
    for (const endpoint of list) {
      for (const target of order) {
        if (!measures(target.kind, endpoint)) continue;
        if (options.waitIdleS) await waitIdle(options.waitIdleS, log);
        if (rep === 1 && options.warmupS > 0) {
          await load(generator, target, endpoint, {
            connections: options.connections,
            users: options.users,
            seed: 7,
            durationS: options.warmupS,
          });
          if (endpoint.method === 'POST') await afterWrites(target);
        }
        const result = await measureRun(generator, target, endpoint, options);
        (results[target.kind][endpoint.key] ??= []).push(result);
        log(
          `  ${label(target).padEnd(width)} ${endpoint.name.padEnd(44)} ${fmt(result.rps, 0).padStart(7)} req/s` +
            `  p50 ${fmt(result.p50Ms, 2)} ms  p99 ${fmt(result.p99Ms, 2)} ms  errors ${result.errors}` +
            `  other CPU ${fmt(result.otherCpuPct, 0)}%` +
            (result.cpuUs
              ? `  CPU µs/req app ${fmt(result.cpuUs.app, 0)} pg ${fmt(result.cpuUs.postgres, 0)} load ${fmt(result.cpuUs.load, 0)}`
              : '') +
            (result.errors ? ` ${JSON.stringify(result.detail)}` : ''),
        );
        if (endpoint.method === 'POST') await afterWrites(target);
        await afterRun?.(target, endpoint, rep);
      }
    }
  }
  return results;
}
