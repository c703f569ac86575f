// The PrometheusRule of k8s/overlays/prod: what the generator writes from monitoring/slos.yaml and
// monitoring/alerts.yaml, rendered by the prod overlay, every alert labelled and linked to its
// runbook, the SLO alerts the workbook's burn-rate pairs, and a time scale that changes windows
// and nothing else.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  PROMETHEUS_RULE,
  renderPrometheusRule,
  ruleGroups,
  RUNBOOK_BASE_URL,
  runbookPath,
  WATCHDOG_ALERT,
} from '../../scripts/lib/prometheus-rules.mjs';
import { BURN_WINDOWS, durationMs, type RuleGroup } from '../../scripts/lib/slo-rules.mjs';
import { overlays, prod } from '../support/k8s-manifests.js';
import { alertRules } from '../support/promql.js';
import { root } from '../support/project-files.js';

/** Every `[range]` of an expression, in order. */
const ranges = (expr: string) => [...expr.matchAll(/\[([^\]]+)\]/g)].map(([, range]) => range);

describe('Prometheus rules (k8s/overlays/prod/prometheusrule.yaml)', () => {
  let groups: RuleGroup[];

  beforeAll(async () => {
    groups = await ruleGroups();
  });

  it('is committed exactly as `npm run monitoring:rules` writes it', async () => {
    expect(readFileSync(PROMETHEUS_RULE, 'utf8')).toBe(await renderPrometheusRule());
  });

  it('is a resource of the prod overlay only, labelled like the rest, holding every group', () => {
    expect(prod.kustomization.resources).toContain(path.basename(PROMETHEUS_RULE));
    const rendered = prod.objects.filter((object) => object.kind === 'PrometheusRule');
    expect(rendered).toHaveLength(1);
    const [rule] = rendered as { apiVersion: string; spec: { groups: RuleGroup[] } }[];
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.spec.groups).toEqual(groups);
    // The dev overlay has no Prometheus Operator to give it to.
    for (const overlay of overlays.filter((o) => o !== prod)) {
      expect(overlay.objects.filter((object) => object.kind === 'PrometheusRule')).toEqual([]);
    }
  });

  it('carries the selector label of kube-prometheus-stack, one value in the prod overlay, on the ServiceMonitor and the PrometheusRule only', () => {
    const entries = (prod.kustomization.labels ?? []).filter((entry) => 'release' in entry.pairs);
    expect(entries).toHaveLength(1);
    const [{ pairs, fields, includeSelectors }] = entries;
    expect(pairs.release).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    // On metadata only: a selector or a pod template carrying it would change what is selected.
    expect(includeSelectors ?? false).toBe(false);
    expect(fields?.map(({ kind, path }) => `${kind} ${path}`).sort()).toEqual([
      'PrometheusRule metadata/labels',
      'ServiceMonitor metadata/labels',
    ]);
    const labelled = prod.objects
      .filter((object) => object.metadata?.labels?.release === pairs.release)
      .map((object) => object.kind)
      .sort();
    expect(labelled).toEqual(['PrometheusRule', 'ServiceMonitor']);
    expect(prod.objects.filter((object) => object.metadata?.labels?.release)).toHaveLength(2);
  });

  it('gives every alert a severity, a summary and a runbook_url into docs/runbooks on main', () => {
    const alerts = alertRules(groups);
    expect(alerts.length).toBeGreaterThanOrEqual(16);
    for (const { alert, labels, annotations } of alerts) {
      // The watchdog pages nobody: it is the heartbeat a dead man's switch expects.
      expect([alert, labels?.severity]).toEqual([
        alert,
        alert === WATCHDOG_ALERT ? 'none' : expect.stringMatching(/^(critical|warning)$/),
      ]);
      expect([alert, annotations?.summary]).toEqual([alert, expect.stringMatching(/\w/)]);
      expect(annotations?.runbook_url).toBe(`${RUNBOOK_BASE_URL}docs/runbooks/${alert}.md`);
      expect(existsSync(path.join(root, runbookPath(alert)))).toBe(true);
    }
    // The base URL ends at the repository's main branch: the runbook's path follows.
    expect(RUNBOOK_BASE_URL).toMatch(/^https:\/\/[^/]+\/[\w.-]+\/[\w.-]+\/blob\/main\/$/);
  });

  it('has a watchdog that always fires, in a group of its own', () => {
    const watchdogs = groups.filter((group) =>
      group.rules.some((rule) => rule.alert === WATCHDOG_ALERT),
    );
    expect(
      watchdogs.map((group) =>
        group.rules.map(({ alert, expr, for: wait }) => ({ alert, expr, wait })),
      ),
    ).toEqual([[{ alert: WATCHDOG_ALERT, expr: 'vector(1)', wait: undefined }]]);
  });

  it('records every SLI over the alerts’ windows and the 30-day period', () => {
    const sliGroups = groups.filter((group) => group.name.startsWith('sloth-slo-sli-recordings-'));
    expect(sliGroups).toHaveLength(6);
    for (const group of sliGroups) {
      expect(group.rules.map((rule) => rule.labels?.sloth_window)).toEqual([
        '5m',
        '30m',
        '1h',
        '2h',
        '6h',
        '1d',
        '3d',
        '30d',
      ]);
      for (const rule of group.rules) {
        expect(rule.record).toBe(`slo:sli_error:ratio_rate${rule.labels?.sloth_window}`);
      }
    }
  });

  it('pages on 2% of the budget in 1 h or 5% in 6 h, tickets on 10% in 3 days: each with its short window', () => {
    const sloAlerts = alertRules(groups).filter((rule) => rule.labels?.sloth_severity);
    expect(sloAlerts).toHaveLength(12);
    for (const rule of sloAlerts) {
      const severity = rule.labels!.sloth_severity as 'page' | 'ticket';
      expect(rule.labels?.severity).toBe(severity === 'page' ? 'critical' : 'warning');
      const budget = Number(/\* ([\d.]+)\)/.exec(rule.expr)?.[1]);
      // The objective recorded for the SLO the expression selects.
      const id = /sloth_id="([^"]+)"/.exec(rule.expr)?.[1];
      const objective = groups
        .flatMap((group) => group.rules)
        .find((r) => r.record === 'slo:objective:ratio' && r.labels?.sloth_id === id);
      expect(budget).toBeCloseTo(1 - Number(/vector\(([\d.]+)\)/.exec(objective!.expr)?.[1]), 12);
      // Each pair: the short window and the long one, both over factor x budget.
      const pairs = rule.expr.split('\nor\n');
      expect(pairs).toHaveLength(BURN_WINDOWS[severity].length);
      BURN_WINDOWS[severity].forEach(({ long, short, factor }, i) => {
        expect(pairs[i]).toContain(`ratio_rate${short}{`);
        expect(pairs[i]).toContain(`ratio_rate${long}{`);
        expect(pairs[i].match(new RegExp(`> \\(${factor} \\* ${budget}\\)`, 'g'))).toHaveLength(2);
        expect(durationMs(long)).toBe(12 * durationMs(short));
      });
    }
    // A burn of factor f for the long window spends f x window / 30 days of the budget.
    const spent = (window: string, factor: number) =>
      (factor * durationMs(window)) / durationMs('30d');
    const [fast, slow] = BURN_WINDOWS.page.map(({ long, factor }) => spent(long, factor));
    expect([fast, slow, spent(BURN_WINDOWS.ticket[1].long, BURN_WINDOWS.ticket[1].factor)]).toEqual(
      [expect.closeTo(0.02, 12), expect.closeTo(0.05, 12), expect.closeTo(0.1, 12)],
    );
  });

  it('with a time scale, divides every window and `for` by it and changes nothing else', async () => {
    const scaled = await ruleGroups({ timeScale: 60 });
    expect(scaled.map((group) => group.name)).toEqual(groups.map((group) => group.name));
    const pairs = groups.flatMap((group, g) =>
      group.rules.map((rule, r) => [rule, scaled[g].rules[r]]),
    );
    expect(pairs.filter(([rule]) => rule.for).length).toBeGreaterThan(10);
    for (const [rule, fast] of pairs) {
      const strip = (expr: string) => expr.replace(/\[[^\]]+\]/g, '[]');
      expect(strip(fast.expr)).toBe(strip(rule.expr));
      expect(ranges(fast.expr).map((range) => 60 * durationMs(range))).toEqual(
        ranges(rule.expr).map(durationMs),
      );
      expect(fast.for && 60 * durationMs(fast.for)).toEqual(rule.for && durationMs(rule.for));
      expect({ ...fast, expr: '', for: '' }).toEqual({ ...rule, expr: '', for: '' });
    }
  });
});
