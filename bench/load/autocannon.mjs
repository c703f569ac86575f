// HTTP load from autocannon, the fallback where wrk is not installed: closed loop, N keep-alive
// connections, every latency of a 2xx answer kept at full resolution, percentiles by nearest rank.
import autocannon from 'autocannon';
import { random, Samples } from '../../scripts/lib/measure.mjs';

/** Whether an answer counts: the endpoint's expected status, else any 2xx. */
export function succeeded(endpoint, status) {
  return endpoint.expectStatus ? status === endpoint.expectStatus : status >= 200 && status < 300;
}

/** One autocannon run of `endpoint` against `target` (127.0.0.1 only), at most `maxRequests`. */
export async function autocannonLoad(
  target,
  endpoint,
  { durationS, connections, seed, maxRequests },
) {
  if (new URL(target.base).hostname !== '127.0.0.1') {
    throw new Error(`refusing to load ${target.base}: not 127.0.0.1`);
  }
  const next = random(seed);
  const samples = new Samples();
  let non2xx = 0;
  const statuses = {};
  const instance = autocannon({
    url: target.base,
    connections,
    duration: durationS,
    timeout: 10,
    requests: [
      {
        method: endpoint.method ?? 'GET',
        headers: endpoint.body ? { 'content-type': 'application/json' } : {},
        setupRequest: (request) => {
          request.path = endpoint.path(next);
          if (endpoint.body) request.body = endpoint.body();
          if (endpoint.headers) {
            request.headers = { ...request.headers, ...endpoint.headers(request.path) };
          }
          return request;
        },
      },
    ],
  });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (succeeded(endpoint, statusCode)) samples.add(responseTime);
    else {
      non2xx++;
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    }
    if (samples.length + non2xx >= maxRequests) instance.stop();
  });
  const started = performance.now();
  const result = await instance;
  const measuredS = (performance.now() - started) / 1000;
  const [p50Ms, p90Ms, p99Ms, maxMs] = samples.percentiles(50, 90, 99, 100);
  return {
    count: samples.length,
    rps: samples.length / measuredS,
    p50Ms,
    p90Ms,
    p99Ms,
    maxMs,
    errors: non2xx + result.errors + result.mismatches,
    detail: { statuses, connectionErrors: result.errors, timeouts: result.timeouts },
  };
}
