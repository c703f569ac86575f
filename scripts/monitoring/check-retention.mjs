// `npm run monitoring:retention -- http://prometheus:9090`: fails (exit 1) when that Prometheus
// keeps its data for less than the SLOs' 30-day period (scripts/lib/prometheus-retention.mjs).
// Run it against the Prometheus that evaluates the service's rules, e.g. through
// `kubectl -n monitoring port-forward svc/<release>-prometheus 9090`.
import { checkRetention } from '../lib/prometheus-retention.mjs';

const url = process.argv[2];
if (!url) {
  console.error('usage: npm run monitoring:retention -- <Prometheus URL>');
  process.exit(2);
}
const { ok, message } = await checkRetention(url.replace(/\/$/, ''));
console.log(`monitoring:retention: ${message}`);
process.exit(ok ? 0 : 1);
