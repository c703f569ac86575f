// What `npm run bench -- --overload` watches on the service during and after each run: the
// kubelet's probes (GET /health with a 3 s timeout, GET /health/ready with 2 s, every second, a
// new connection each, on the metrics port as the Deployment has them), the peak RSS of its
// process (VmRSS every 100 ms), the time it takes after the load ends to answer GET /users/:id
// with a 200 within 250 ms again, and the counters of its /metrics (rejections by class, gRPC
// calls by status) read before and after a run.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const PROBES = [
  { name: 'liveness', path: '/health', timeoutMs: 3000 },
  { name: 'readiness', path: '/health/ready', timeoutMs: 2000 },
];
const PROBE_PERIOD_MS = 1000;
const RSS_PERIOD_MS = 100;
const RECOVERY_POLL_MS = 50;
const RECOVERY_BOUND_MS = 10_000;

/**
 * GET `path` on a connection of its own. Resolves with { status, ms }; status 0 when it timed
 * out after `timeoutMs` or the connection failed.
 */
export function getOnce(port, path, timeoutMs) {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status) => resolve({ status, ms: performance.now() - started });
    const request = http.get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      response.resume();
      response.once('end', () => done(response.statusCode));
      response.once('error', () => done(0));
    });
    request.setTimeout(timeoutMs, () => request.destroy());
    request.once('error', () => done(0));
  });
}

/** VmRSS of a process in bytes, or NaN once it is gone. */
function rss(pid) {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb) * 1024;
  } catch {
    return NaN;
  }
}

/**
 * Starts probing `target` and sampling its RSS; `stop()` resolves with { probes: { liveness:
 * { sent, failed, worstMs }, readiness: … }, peakRssBytes }.
 */
export function watch(target) {
  const probes = Object.fromEntries(
    PROBES.map((p) => [p.name, { sent: 0, failed: 0, worstMs: 0 }]),
  );
  let peakRssBytes = rss(target.pid) || 0;
  const sampler = setInterval(() => {
    peakRssBytes = Math.max(peakRssBytes, rss(target.pid) || 0);
  }, RSS_PERIOD_MS);
  let stopped = false;
  const pending = new Set();
  const loop = (async () => {
    while (!stopped) {
      for (const probe of PROBES) {
        const answer = getOnce(target.metricsPort, probe.path, probe.timeoutMs).then(
          ({ status, ms }) => {
            const tally = probes[probe.name];
            tally.sent++;
            if (status !== 200) tally.failed++;
            tally.worstMs = Math.max(tally.worstMs, ms);
          },
        );
        pending.add(answer);
        answer.finally(() => pending.delete(answer));
      }
      await sleep(PROBE_PERIOD_MS);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await Promise.all(pending);
      clearInterval(sampler);
      return { probes, peakRssBytes };
    },
  };
}

/**
 * Milliseconds from now until GET /users/`id` answers 200 within 250 ms, polled every 50 ms;
 * null when it has not after 10 s.
 */
export async function recoveryMs(target, id) {
  const started = performance.now();
  while (performance.now() - started < RECOVERY_BOUND_MS) {
    const { status, ms } = await getOnce(target.port, `/users/${id}`, 250);
    if (status === 200 && ms <= 250) return performance.now() - started;
    await sleep(RECOVERY_POLL_MS);
  }
  return null;
}

/** The samples of a Prometheus text exposition: [{ name, labels, value }]. */
async function scrape(metricsUrl) {
  const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(5000) });
  const text = await response.text();
  const samples = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** Σ of the samples named `name` whose labels pass `keep`, grouped by `by(labels)`. */
function sumBy(samples, name, by, keep = () => true) {
  const sums = {};
  for (const s of samples) {
    if (s.name !== name || !keep(s.labels)) continue;
    const key = by(s.labels);
    sums[key] = (sums[key] ?? 0) + s.value;
  }
  return sums;
}

/** after − before of each key of two sumBy results (a key missing before counts from 0). */
export function delta(before, after) {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
}

/**
 * The counters of the service a run moves: rejections by transport/class, and GetUser calls by
 * gRPC status code.
 */
export async function counters(target) {
  const samples = await scrape(target.metricsUrl);
  return {
    rejected: sumBy(samples, 'overload_rejected_total', (l) => `${l.transport}/${l.class}`),
    getUserCodes: sumBy(
      samples,
      'grpc_server_handled_total',
      (l) => l.grpc_code,
      (l) => l.grpc_method === 'GetUser',
    ),
  };
}
