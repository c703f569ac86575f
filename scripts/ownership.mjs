// `npm run ownership`: writes the team and the repository of ownership.yaml into CODEOWNERS,
// catalog-info.yaml, the Alertmanager routing example (monitoring/alertmanager.example.yaml) and
// the alerts' runbook_url and team label (k8s/overlays/prod/prometheusrule.yaml). Commit
// the result; test/operations/ownership.spec.ts fails while a file differs.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  ALERTMANAGER_FILE,
  CATALOG_FILE,
  CODEOWNERS_FILE,
  readOwnership,
  renderAlertmanager,
  renderCatalog,
  renderCodeowners,
} from './lib/ownership.mjs';
import { PROMETHEUS_RULE, renderPrometheusRule } from './lib/prometheus-rules.mjs';

const ownership = readOwnership();
const files = [
  [CODEOWNERS_FILE, renderCodeowners(await readFile(CODEOWNERS_FILE, 'utf8'), ownership)],
  [CATALOG_FILE, await renderCatalog(await readFile(CATALOG_FILE, 'utf8'), ownership)],
  [ALERTMANAGER_FILE, renderAlertmanager(await readFile(ALERTMANAGER_FILE, 'utf8'), ownership)],
  [PROMETHEUS_RULE, await renderPrometheusRule()],
];
for (const [file, text] of files) {
  await writeFile(file, text);
  console.error(`ownership: wrote ${path.relative(process.cwd(), file)}`);
}
