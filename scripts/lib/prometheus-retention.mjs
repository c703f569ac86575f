// The retention a Prometheus needs for the SLOs: the 30-day SLIs and budgets are computed over
// 30 days of the 5-minute SLI series (slo-rules.mjs), so a shorter retention silently shortens
// the window (kube-prometheus-stack keeps 10 days by default). Read from a running Prometheus's
// runtime information, the same value `--storage.tsdb.retention.time` (or the Operator's
// `retention`) sets.
import { durationMs, PERIOD } from './slo-rules.mjs';

/** The shortest retention the SLO period allows. */
export const REQUIRED_RETENTION = PERIOD;

/**
 * Whether a retention as Prometheus reports it (`4w2d`, `15d or 10GiB`) covers the SLO period.
 * A size bound (`or 10GiB`) may delete sooner: the result says so.
 * @param {string} reported runtimeinfo's storageRetention
 * @returns {{ ok: boolean; message: string }}
 */
export function judgeRetention(reported) {
  const [time, size] = reported.split(' or ');
  const enough = durationMs(time) >= durationMs(REQUIRED_RETENTION);
  const sizeNote = size
    ? `; the size bound ${size} may delete sooner: keep it above 30 days of data`
    : '';
  return {
    ok: enough,
    message: enough
      ? `retention ${reported} covers the SLO period of ${REQUIRED_RETENTION}${sizeNote}`
      : `retention ${time} is shorter than the SLO period: the 30-day SLIs and error budgets need at least ${REQUIRED_RETENTION} (docs/monitoring.md)`,
  };
}

/**
 * The retention of the Prometheus at `url` (GET /api/v1/status/runtimeinfo), judged.
 * @param {string} url
 */
export async function checkRetention(url) {
  const response = await fetch(`${url}/api/v1/status/runtimeinfo`, {
    signal: AbortSignal.timeout(10_000),
  });
  const body = /** @type {{ status: string; data?: { storageRetention?: string } }} */ (
    await response.json()
  );
  const reported = body.data?.storageRetention;
  if (body.status !== 'success' || !reported) {
    throw new Error(`${url}: no storageRetention in /api/v1/status/runtimeinfo`);
  }
  return { reported, ...judgeRetention(reported) };
}
