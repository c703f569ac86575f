// A closed-loop load generator for users.Users/GetUser on @grpc/grpc-js: `connections` calls in
// flight at all times on one channel (one HTTP/2 connection, as a typical grpc-js client holds),
// each worker sending its next call as soon as the previous one answers. Bounded by time and by a
// maximum number of calls. Latencies are kept (sub-millisecond resolution) and sorted once at the
// end for the percentiles.
//
//   node bench/load/grpc.mjs 127.0.0.1:5000 --connections 50 --duration 10 --max-id 100000
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

if (process.argv[1] === import.meta.filename) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      connections: { type: 'string', default: '50' },
      duration: { type: 'string', default: '10' },
      'max-id': { type: 'string', default: '1000' },
    },
  });
  const result = await runGrpcLoad({
    address: positionals[0] ?? '127.0.0.1:5000',
    connections: Number(values.connections),
    durationMs: Number(values.duration) * 1000,
    maxId: Number(values['max-id']),
  });
  console.log(JSON.stringify(result, null, 2));
}
