// `npm run monitoring:rules`: writes k8s/overlays/prod/prometheusrule.yaml from
// monitoring/slos.yaml and monitoring/alerts.yaml (scripts/lib/prometheus-rules.mjs). Commit the
// result; test/operations/prometheus-rules.spec.ts fails while it is out of date.
//
//   npm run monitoring:rules
//   npm run monitoring:rules -- --rules-file /tmp/rules.yaml [--time-scale 60]
//       a plain rule file instead (for a Prometheus of your own), every window and `for` divided
//       by the time scale (60: an hour's window lasts a minute)
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PROMETHEUS_RULE, renderPrometheusRule, renderRuleFile } from '../lib/prometheus-rules.mjs';

const { values } = parseArgs({
  options: { 'rules-file': { type: 'string' }, 'time-scale': { type: 'string', default: '1' } },
});
const timeScale = Number(values['time-scale']);
if (!(timeScale >= 1)) throw new Error('--time-scale must be a number of at least 1');
if (timeScale !== 1 && !values['rules-file']) {
  throw new Error(
    '--time-scale applies to --rules-file only: the manifest keeps production windows',
  );
}

const target = values['rules-file'] ?? PROMETHEUS_RULE;
const text = values['rules-file']
  ? await renderRuleFile({ timeScale })
  : await renderPrometheusRule();
await writeFile(target, text);
console.error(`monitoring:rules: wrote ${path.relative(process.cwd(), target) || target}`);
