// Every metric a panel of the Grafana dashboard or a Prometheus rule queries is one the service
// exports: the service runs in-process (createTestApp), takes a little HTTP and gRPC traffic,
// and its /metrics (on the metrics port) names what it exports. Histogram suffixes and the series
// the rules record count as known.
import { RelayMetrics } from '../../scripts/lib/relay-status.mjs';
import request from 'supertest';
import { getUser, usersClient, type UsersClient } from '../../scripts/lib/grpc-client.mjs';
import { dashboard } from '../../scripts/lib/grafana-dashboard.mjs';
import { ruleGroups } from '../../scripts/lib/prometheus-rules.mjs';
import type { RuleGroup } from '../../scripts/lib/slo-rules.mjs';
import { metricNames, recordedNames } from '../support/promql.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

/** Series Prometheus writes itself for every target it scrapes. */
const PROMETHEUS_SERIES = ['up'];
const HISTOGRAM_SERIES = ['_bucket', '_sum', '_count'];
/** The rule group that reads the change feed relay's metrics (scripts/lib/relay-status.mjs). */
const RELAY_GROUP = 'users-service-relay';
/**
 * The rule group that reads the backup age the pgBackRest repository host writes
 * (deploy/backup/pgbackrest-metrics.sh; test/operations/backup-metrics.spec.ts checks it reads
 * only what the script writes).
 */
const BACKUP_GROUP = 'users-service-backups';
/** The rule group that reads kube-state-metrics (docs/monitoring.md, "Kubernetes alerts"). */
const KUBERNETES_GROUP = 'users-service-kubernetes';
/** The kube-state-metrics series it reads, and no others. */
const KUBE_STATE_METRICS = new Set([
  'kube_pod_container_status_restarts_total',
  'kube_deployment_status_replicas_available',
  'kube_deployment_status_condition',
  'kube_job_failed',
  'kube_horizontalpodautoscaler_status_current_replicas',
  'kube_horizontalpodautoscaler_spec_max_replicas',
]);

/** Every metric the exposition declares (`# TYPE`), histograms with their series. */
function exportedNames(text: string): Set<string> {
  const names = [...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, name, type]) =>
    type === 'histogram' ? HISTOGRAM_SERIES.map((suffix) => `${name}${suffix}`) : [name],
  );
  return new Set(names);
}

/** Each query of the dashboard, as `panel title: expr`. */
function dashboardQueries(): [string, string][] {
  const board = dashboard() as {
    panels: { title: string; targets?: { expr: string }[] }[];
    templating: { list: { name: string; query: string | { query: string } }[] };
  };
  const variables = board.templating.list
    .filter((variable) => typeof variable.query === 'object')
    // label_values(selector, label): the selector names the metric, the label is none.
    .map(({ name, query }): [string, string] => [
      `$${name}`,
      (query as { query: string }).query.replace(/^label_values\((.*),\s*\w+\)$/, '$1'),
    ]);
  const panels = board.panels.flatMap((panel) =>
    (panel.targets ?? []).map(({ expr }): [string, string] => [panel.title, expr]),
  );
  return [...variables, ...panels];
}

describe('metrics the dashboard and the rules query (e2e)', () => {
  let t: TestApp;
  let client: UsersClient;
  let exported: Set<string>;
  let groups: RuleGroup[];
  let known: Set<string>;

  beforeAll(async () => {
    t = await createTestApp({ grpc: true });
    client = usersClient(t.grpcAddress);
    const { body: user } = await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    await t.http().get(`/users/${user.id}`).expect(200);
    await t.http().get('/users').expect(200);
    await t.http().get('/users/999').expect(404);
    expect((await getUser(client, user.id)).code).toBe(0);
    exported = exportedNames((await request(t.metricsUrl).get('').expect(200)).text);
    groups = await ruleGroups();
    known = new Set([...exported, ...recordedNames(groups), ...PROMETHEUS_SERIES]);
  });

  afterAll(async () => {
    client?.close();
    await resetDatabase(t.dataSource);
    await t?.close();
  });

  it('exports the families the SLOs, the alerts and the dashboard are built on', () => {
    for (const name of [
      'http_request_duration_seconds_bucket',
      'grpc_server_handled_total',
      'grpc_server_handling_seconds_count',
      'db_pool_waiting_requests',
      'db_primary_up',
      'db_failover_retries_total',
      'db_commit_outcome_unknown_total',
      'db_replica_lag_seconds',
      'auth_jwks_refresh_failures_total',
      'auth_jwks_last_refresh_success_timestamp_seconds',
      'nodejs_eventloop_lag_seconds',
      'process_start_time_seconds',
    ]) {
      expect([name, exported.has(name)]).toEqual([name, true]);
    }
  });

  it('queries, in every panel and variable of the dashboard, only metrics it exports or records', () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(20);
    for (const [where, expr] of queries) {
      const names = metricNames(expr);
      expect([where, names.length > 0]).toEqual([where, true]);
      expect([where, names.filter((name) => !known.has(name))]).toEqual([where, []]);
    }
    // What the dashboard is for: each of these appears in some panel.
    const shown = new Set(queries.flatMap(([, expr]) => metricNames(expr)));
    for (const name of [
      'slo:period_error_budget_remaining:ratio',
      'http_request_duration_seconds_count',
      'http_request_duration_seconds_bucket',
      'grpc_server_handled_total',
      'db_pool_waiting_requests',
      'db_failover_retries_total',
      'db_commit_outcome_unknown_total',
      'db_replica_lag_seconds',
      'db_replica_up',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect([name, shown.has(name)]).toEqual([name, true]);
    }
  });

  it('queries, in every recording and alerting rule, only metrics it exports or records', () => {
    const rules = groups
      .filter((group) => ![KUBERNETES_GROUP, RELAY_GROUP, BACKUP_GROUP].includes(group.name))
      .flatMap((group) => group.rules);
    expect(rules.length).toBeGreaterThan(100);
    for (const rule of rules) {
      const where = rule.record ?? rule.alert;
      const names = metricNames(rule.expr);
      expect([where, names.filter((name) => !known.has(name))]).toEqual([where, []]);
    }
  });

  it('queries, in the relay alerts, only metrics the relay exports', async () => {
    const relayExports = new Set(
      (await new RelayMetrics().registry.getMetricsAsJSON()).map((metric) => metric.name),
    );
    const rules = groups.find((group) => group.name === RELAY_GROUP)?.rules ?? [];
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      const names = metricNames(rule.expr);
      expect([rule.alert, names.length > 0]).toEqual([rule.alert, true]);
      expect([rule.alert, names.filter((name) => !relayExports.has(name))]).toEqual([
        rule.alert,
        [],
      ]);
    }
  });

  it('queries, in the Kubernetes alerts, only the kube-state-metrics series they name', () => {
    const rules = groups.find((group) => group.name === KUBERNETES_GROUP)?.rules ?? [];
    const used = new Set(rules.flatMap((rule) => metricNames(rule.expr)));
    expect([...used].sort()).toEqual([...KUBE_STATE_METRICS].sort());
    for (const rule of rules) {
      const names = metricNames(rule.expr);
      expect([rule.alert, names.length > 0]).toEqual([rule.alert, true]);
      expect([rule.alert, names.filter((name) => !KUBE_STATE_METRICS.has(name))]).toEqual([
        rule.alert,
        [],
      ]);
    }
  });

  it('the name reader itself: functions, labels, ranges, grouping and variables are no metrics', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{job="x", le="0.25"}[$__rate_interval])))',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(metricNames('a{x="1"} / on (sloth_id) group_left b\n/ ignoring (w)\nc[5m]')).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(metricNames('time() - ts{job="j"} > 1800 and increase(f_total[30m]) > 0')).toEqual([
      'f_total',
      'ts',
    ]);
    expect(metricNames('slo:sli_error:ratio_rate5m{sloth_id="x"} > (14.4 * 0.001)')).toEqual([
      'slo:sli_error:ratio_rate5m',
    ]);
    expect(metricNames('vector(1)')).toEqual([]);
  });
});
