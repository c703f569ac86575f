// `npm run monitoring:dashboard`: writes monitoring/grafana-dashboard.json from
// monitoring/dashboard.yaml (scripts/lib/grafana-dashboard.mjs). Commit the result;
// test/operations/dashboard.spec.ts fails while it is out of date, and
// test/operations/exported-metrics.e2e-spec.ts while a panel queries a metric the service does
// not export.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DASHBOARD_FILE, renderDashboard } from '../lib/grafana-dashboard.mjs';

await writeFile(DASHBOARD_FILE, await renderDashboard());
console.error(`monitoring:dashboard: wrote ${path.relative(process.cwd(), DASHBOARD_FILE)}`);
