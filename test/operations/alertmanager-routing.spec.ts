// monitoring/alertmanager.example.yaml routes every alert of the rules by its `team` and
// `severity` labels: the watchdog to the dead man's switch, critical alerts to the pager,
// warnings to tickets, nothing to the catch-all receiver; the inhibit rule names alerts that
// exist; the receivers keep no key or URL in the file. Routing follows Alertmanager's tree: the
// first child route whose matchers all match, depth first, else the parent's receiver (only the
// `name="value"` matchers the file uses are read; any other form fails the spec).
import { parse } from 'yaml';
import { ruleGroups, TEAM, WATCHDOG_ALERT } from '../../scripts/lib/prometheus-rules.mjs';
import { alertRules } from '../support/promql.js';
import { read } from '../support/project-files.js';

interface Route {
  receiver?: string;
  matchers?: string[];
  continue?: boolean;
  routes?: Route[];
}

interface Config {
  route: Route;
  inhibit_rules: { source_matchers: string[]; target_matchers: string[]; equal: string[] }[];
  receivers: ({ name: string } & Record<string, Record<string, unknown>[] | string>)[];
}

const config = parse(read('monitoring/alertmanager.example.yaml')) as Config;

/** `name="value"` as a pair; any other matcher form is refused. */
function matcher(text: string): [string, string] {
  const found = /^(\w+)="([^"]*)"$/.exec(text);
  if (!found) throw new Error(`not an equality matcher: ${text}`);
  return [found[1], found[2]];
}

const matches = (matchers: string[] | undefined, labels: Record<string, string>) =>
  (matchers ?? []).map(matcher).every(([name, value]) => (labels[name] ?? '') === value);

/** The receiver Alertmanager picks for an alert with these labels. */
function receiverOf(route: Route, labels: Record<string, string>, inherited?: string): string {
  const receiver = route.receiver ?? inherited!;
  for (const child of route.routes ?? []) {
    expect(child.continue ?? false).toBe(false);
    if (matches(child.matchers, labels)) return receiverOf(child, labels, receiver);
  }
  return receiver;
}

describe('Alertmanager routing (monitoring/alertmanager.example.yaml)', () => {
  let alerts: { alertname: string; labels: Record<string, string> }[];

  beforeAll(async () => {
    alerts = alertRules(await ruleGroups()).map((rule) => ({
      alertname: rule.alert,
      labels: { ...rule.labels, alertname: rule.alert },
    }));
  });

  it('routes the watchdog to the heartbeat, critical alerts to the pager and warnings to tickets', () => {
    expect(alerts.length).toBeGreaterThanOrEqual(16);
    const expected = { none: 'users-service-heartbeat', critical: 'users-service-page' };
    for (const { alertname, labels } of alerts) {
      expect([alertname, receiverOf(config.route, labels)]).toEqual([
        alertname,
        expected[labels.severity as keyof typeof expected] ?? 'users-service-ticket',
      ]);
    }
    expect(alerts.find((alert) => alert.alertname === WATCHDOG_ALERT)?.labels.severity).toBe(
      'none',
    );
    // Each of the three receives some alert, and the catch-all none.
    const used = new Set(alerts.map(({ labels }) => receiverOf(config.route, labels)));
    expect([...used].sort()).toEqual([
      'users-service-heartbeat',
      'users-service-page',
      'users-service-ticket',
    ]);
  });

  it("matches this team only: another team's alerts fall through, and the team is ownership.yaml's", () => {
    const critical = alerts.find(({ labels }) => labels.severity === 'critical')!;
    expect(receiverOf(config.route, { ...critical.labels, team: 'another-team' })).toBe(
      config.route.receiver,
    );
    const teams = read('monitoring/alertmanager.example.yaml').match(/team="[^"]*"/g) ?? [];
    expect(teams.length).toBeGreaterThanOrEqual(5);
    expect(new Set(teams)).toEqual(new Set([`team="${TEAM}"`]));
    for (const { labels } of alerts) expect(labels.team).toBe(TEAM);
  });

  it('inhibits the availability burns while the database is down, never the cause itself', () => {
    const [rule, ...others] = config.inhibit_rules;
    expect(others).toEqual([]);
    const sources = alerts.filter(({ labels }) => matches(rule.source_matchers, labels));
    const targets = alerts.filter(({ labels }) => matches(rule.target_matchers, labels));
    expect(sources.map((alert) => alert.alertname)).toEqual(['UsersServiceDatabaseDown']);
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) expect(target.labels.category).toBe('availability');
    expect(targets.filter((target) => matches(rule.source_matchers, target.labels))).toEqual([]);
    expect(rule.equal).toEqual(['namespace']);
  });

  it('names only receivers it defines, and keeps every key and URL in a file', () => {
    const names = config.receivers.map((receiver) => receiver.name);
    expect(new Set(names).size).toBe(names.length);
    const referenced = (route: Route): string[] => [
      ...(route.receiver ? [route.receiver] : []),
      ...(route.routes ?? []).flatMap(referenced),
    ];
    for (const name of referenced(config.route)) expect(names).toContain(name);
    const integrations = config.receivers.flatMap((receiver) =>
      Object.entries(receiver)
        .filter(([key]) => key.endsWith('_configs'))
        .flatMap(([, list]) => list as Record<string, unknown>[]),
    );
    expect(integrations.length).toBe(3);
    for (const integration of integrations) {
      const keys = Object.keys(integration);
      expect(keys.filter((key) => /^(url|routing_key|service_key|api_url)$/.test(key))).toEqual([]);
      const files = keys.filter((key) => key.endsWith('_file'));
      expect(files).toHaveLength(1);
      expect(integration[files[0]]).toMatch(/^\/etc\/alertmanager\/secrets\//);
    }
  });
});
