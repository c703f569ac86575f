// A closed-loop load generator for users.Users/GetUser on @grpc/grpc-js: `connections` calls in
// flight at all times on one channel (one HTTP/2 connection, as a typical grpc-js client holds),
// each worker sending its next call as soon as the previous one answers. Bounded by time and by a
// maximum number of calls. Latencies are kept (sub-millisecond resolution) and sorted once at the
// end for the percentiles.
//
// The benchmark runs it in a process of its own (grpcLoadProcess), as it runs wrk: in the
// benchmark's process its event loop would share turns with the draining of the service's log
// pipe (a read per log write), which slowed the calls to the service, the only target that logs.
//
//   node bench/load/grpc.mjs 127.0.0.1:5000 --connections 50 --duration 10 --max-id 100000
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { usersClient } from '../../scripts/lib/grpc-client.mjs';
import { random, Samples } from '../../scripts/lib/measure.mjs';

/**
 * Runs GetUser for `durationMs` with `connections` calls in flight.
 * @returns {{count, errors, errorCodes, durationS, rps, p50Ms, p90Ms, p99Ms, maxMs}}
 */
export async function runGrpcLoad({
  address,
  connections = 50,
  durationMs = 10_000,
  maxCalls = 10_000_000,
  maxId = 1000,
  seed = 42,
  deadlineMs = 5000,
}) {
  const client = usersClient(address);
  await new Promise((resolve, reject) =>
    client.waitForReady(Date.now() + 5000, (error) => (error ? reject(error) : resolve())),
  );
  const next = random(seed);
  const samples = new Samples();
  const errorCodes = {};
  let started = 0;
  let errors = 0;

  const call = (id) =>
    new Promise((resolve) => {
      client.GetUser({ id }, { deadline: Date.now() + deadlineMs }, (error, reply) => {
        if (error) {
          errorCodes[error.code] = (errorCodes[error.code] ?? 0) + 1;
          resolve(false);
        } else {
          resolve(reply.id === id);
        }
      });
    });

  const begin = performance.now();
  const end = begin + durationMs;
  async function worker() {
    while (started < maxCalls && performance.now() < end) {
      started++;
      const id = 1 + Math.floor(next() * maxId);
      const sent = performance.now();
      if (await call(id)) samples.add(performance.now() - sent);
      else errors++;
    }
  }
  await Promise.all(Array.from({ length: connections }, worker));
  const durationS = (performance.now() - begin) / 1000;
  client.close();

  const count = samples.length;
  const [p50Ms, p90Ms, p99Ms, maxMs] = samples.percentiles(50, 90, 99, 100);
  return {
    count,
    errors,
    errorCodes,
    durationS,
    rps: count / durationS,
    p50Ms,
    p90Ms,
    p99Ms,
    maxMs,
  };
}

/** How long past its duration a load process may take before it is killed (a hang). */
const GRACE_MS = 30_000;

/**
 * runGrpcLoad in a child process of this node (127.0.0.1 only), killed if it runs 30 s past its
 * duration. Its CPU is reaped into this process's, as wrk's is. Resolves with its result.
 */
export async function grpcLoadProcess({ address, connections, durationMs, maxCalls, maxId, seed }) {
  if (!address.startsWith('127.0.0.1:')) throw new Error(`refusing to load ${address}`);
  const args = [
    import.meta.filename,
    address,
    ...['--connections', String(connections), '--duration', String(durationMs / 1000)],
    ...['--max-calls', String(maxCalls), '--max-id', String(maxId), '--seed', String(seed)],
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const killer = setTimeout(() => child.kill('SIGKILL'), durationMs + GRACE_MS);
  const status = await new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  clearTimeout(killer);
  if (status.code !== 0) {
    throw new Error(`gRPC load ${args.join(' ')} ended ${JSON.stringify(status)}:\n${output}`);
  }
  return JSON.parse(output);
}

if (process.argv[1] === import.meta.filename) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      connections: { type: 'string', default: '50' },
      duration: { type: 'string', default: '10' },
      'max-calls': { type: 'string', default: '10000000' },
      'max-id': { type: 'string', default: '1000' },
      seed: { type: 'string', default: '42' },
    },
  });
  const result = await runGrpcLoad({
    address: positionals[0] ?? '127.0.0.1:5000',
    connections: Number(values.connections),
    durationMs: Number(values.duration) * 1000,
    maxCalls: Number(values['max-calls']),
    maxId: Number(values['max-id']),
    seed: Number(values.seed),
  });
  console.log(JSON.stringify(result, null, 2));
}
