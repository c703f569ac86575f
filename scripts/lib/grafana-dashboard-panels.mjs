// What the Grafana dashboard shows (scripts/lib/grafana-dashboard.mjs lays it out): its SLOs and
// their error budget, then the signals the alerts of monitoring/alerts.yaml watch, row by row.
// Queries read the recording rules of the SLOs (`slo:*`) and the service's own metrics, filtered
// by the dashboard's `namespace` variable; test/operations/exported-metrics.e2e-spec.ts checks
// that each metric named here is one the service exports or a rule records.

const JOB = 'job="users-service", namespace=~"$namespace"';
const SLO = 'sloth_service="users-service"';
const API_ROUTES = 'route=~"/users(/.*)?"';
const RATE = '$__rate_interval';

/**
 * @typedef {object} PanelSpec
 * @property {string} title
 * @property {string} description
 * @property {'timeseries' | 'stat'} [type]
 * @property {string} [unit]
 * @property {number} [width] of 24 columns
 * @property {{ expr: string; legend: string }[]} queries
 * @property {{ color: string; value: number | null }[]} [thresholds]
 */

/**
 * @param {string} expr
 * @param {string} legend
 */
const q = (expr, legend) => ({ expr, legend });

/** @param {number} quantile @param {string} histogram @param {string} selector @param {string} by */
const quantile = (quantile, histogram, selector, by = 'le') =>
  `histogram_quantile(${quantile}, sum by (${by}) (rate(${histogram}_bucket{${selector}}[${RATE}])))`;

/** @type {[string, PanelSpec[]][]} */
export const ROWS = [
  [
    'Service level objectives (30 days)',
    [
      {
        title: 'Error budget left',
        description:
          'Share of each SLO’s 30-day error budget not spent yet (docs/slos.md). Below 0: the objective is missed.',
        type: 'stat',
        unit: 'percentunit',
        width: 8,
        queries: [q(`slo:period_error_budget_remaining:ratio{${SLO}}`, '{{sloth_slo}}')],
        thresholds: [
          { color: 'red', value: null },
          { color: 'orange', value: 0 },
          { color: 'green', value: 0.25 },
        ],
      },
      {
        title: 'Burn rate (last 5 min)',
        description:
          'How fast each budget is being spent: 1 spends it in exactly 30 days; the page alerts fire at 14.4 (1 h) and 6 (6 h).',
        width: 8,
        queries: [q(`slo:current_burn_rate:ratio{${SLO}}`, '{{sloth_slo}}')],
      },
      {
        title: 'Error ratio against the budget (1 h)',
        description: 'Each SLI’s share of bad events over the last hour, beside its error budget.',
        unit: 'percentunit',
        width: 8,
        queries: [
          q(`slo:sli_error:ratio_rate1h{${SLO}}`, '{{sloth_slo}}'),
          q(`slo:error_budget:ratio{${SLO}}`, 'budget {{sloth_slo}}'),
        ],
      },
    ],
  ],
  [
    'Traffic and errors',
    [
      {
        title: 'HTTP requests by route',
        description:
          'Requests per second by method and route template (probes and scrapes included).',
        unit: 'reqps',
        queries: [
          q(
            `sum by (method, route) (rate(http_request_duration_seconds_count{${JOB}}[${RATE}]))`,
            '{{method}} {{route}}',
          ),
        ],
      },
      {
        title: 'HTTP errors by route and status',
        description:
          '4xx and 5xx answers per second by route template and status; 5xx count against the SLOs.',
        unit: 'reqps',
        queries: [
          q(
            `sum by (route, status) (rate(http_request_duration_seconds_count{${JOB}, status=~"[45].."}[${RATE}]))`,
            '{{status}} {{route}}',
          ),
        ],
      },
      {
        title: 'gRPC calls by method and code',
        description:
          'gRPC calls per second by method and status code (NOT_FOUND and INVALID_ARGUMENT are the caller’s).',
        unit: 'reqps',
        queries: [
          q(
            `sum by (grpc_method, grpc_code) (rate(grpc_server_handled_total{${JOB}}[${RATE}]))`,
            '{{grpc_method}} {{grpc_code}}',
          ),
        ],
      },
      {
        title: 'Authentication refusals',
        description: 'Requests refused for their credentials, by transport, status and reason.',
        unit: 'reqps',
        queries: [
          q(
            `sum by (transport, status, reason) (rate(auth_rejections_total{${JOB}}[${RATE}]))`,
            '{{transport}} {{status}} {{reason}}',
          ),
        ],
      },
    ],
  ],
  [
    'Latency',
    [
      {
        title: 'Users and posts (REST): p50, p90, p99',
        description:
          'Latency of the routes the SLOs cover; the thresholds are 250 ms (reads) and 500 ms (writes).',
        unit: 's',
        width: 8,
        queries: [0.5, 0.9, 0.99].map((p) =>
          q(quantile(p, 'http_request_duration_seconds', `${JOB}, ${API_ROUTES}`), `p${p * 100}`),
        ),
      },
      {
        title: 'p99 by route',
        description: '99th percentile by route template and method.',
        unit: 's',
        width: 8,
        queries: [
          q(
            quantile(
              0.99,
              'http_request_duration_seconds',
              `${JOB}, ${API_ROUTES}`,
              'le, method, route',
            ),
            '{{method}} {{route}}',
          ),
        ],
      },
      {
        title: 'gRPC GetUser: p50, p99',
        description: 'Latency of users.Users/GetUser; the SLO threshold is 100 ms.',
        unit: 's',
        width: 8,
        queries: [0.5, 0.99].map((p) =>
          q(
            quantile(p, 'grpc_server_handling_seconds', `${JOB}, grpc_method="GetUser"`),
            `p${p * 100}`,
          ),
        ),
      },
    ],
  ],
  [
    'Database',
    [
      {
        title: 'Primary reachable',
        description: '1 when the last readiness check of the instance found the primary writable.',
        width: 6,
        queries: [q(`db_primary_up{${JOB}}`, '{{instance}}')],
      },
      {
        title: 'Connection pool',
        description:
          'Open, idle and waiting per instance: requests waiting for a connection mean the pool is exhausted.',
        width: 6,
        queries: [
          q(`sum by (instance) (db_pool_connections{${JOB}})`, 'open {{instance}}'),
          q(`sum by (instance) (db_pool_idle_connections{${JOB}})`, 'idle {{instance}}'),
          q(`sum by (instance) (db_pool_waiting_requests{${JOB}})`, 'waiting {{instance}}'),
        ],
      },
      {
        title: 'Failover retries and unknown commits',
        description:
          'Keyed creates retried after the primary went away, and commits whose outcome is unknown (docs/failover.md).',
        width: 6,
        queries: [
          q(`sum(increase(db_failover_retries_total{${JOB}}[${RATE}]))`, 'failover retries'),
          q(
            `sum(increase(db_commit_outcome_unknown_total{${JOB}}[${RATE}]))`,
            'commit outcome unknown',
          ),
        ],
      },
      {
        title: 'List reads by pool',
        description: 'List pages and totals served by the read replicas or the primary.',
        unit: 'reqps',
        width: 6,
        queries: [q(`sum by (pool) (rate(db_list_reads_total{${JOB}}[${RATE}]))`, '{{pool}}')],
      },
      {
        title: 'Replica lag',
        description:
          'Delay of each read replica behind the primary; past DB_REPLICA_MAX_LAG_MS (5 s) it is skipped.',
        unit: 's',
        queries: [q(`max by (replica) (db_replica_lag_seconds{${JOB}})`, '{{replica}}')],
      },
      {
        title: 'Replicas up',
        description: 'Instances that reached each replica at their last check.',
        queries: [q(`sum by (replica) (db_replica_up{${JOB}})`, '{{replica}}')],
      },
    ],
  ],
  [
    'Process',
    [
      {
        title: 'Event-loop lag',
        description:
          'How late the event loop runs; every request waits this long on top of its work.',
        unit: 's',
        width: 6,
        queries: [
          q(`nodejs_eventloop_lag_seconds{${JOB}}`, '{{instance}}'),
          q(`nodejs_eventloop_lag_p99_seconds{${JOB}}`, 'p99 {{instance}}'),
        ],
      },
      {
        title: 'CPU',
        description: 'CPU seconds per second of each process (1 = one core).',
        width: 6,
        queries: [q(`rate(process_cpu_seconds_total{${JOB}}[${RATE}])`, '{{instance}}')],
      },
      {
        title: 'Memory',
        description: 'Resident memory and V8 heap used per process.',
        unit: 'bytes',
        width: 6,
        queries: [
          q(`process_resident_memory_bytes{${JOB}}`, 'rss {{instance}}'),
          q(`nodejs_heap_size_used_bytes{${JOB}}`, 'heap {{instance}}'),
        ],
      },
      {
        title: 'Restarts and signing keys',
        description:
          'Process starts in the last hour (process_start_time_seconds changes), and failed fetches of the token signing keys.',
        width: 6,
        queries: [
          q(`changes(process_start_time_seconds{${JOB}}[1h])`, 'restarts {{instance}}'),
          q(`increase(auth_jwks_refresh_failures_total{${JOB}}[1h])`, 'JWKS failures {{instance}}'),
        ],
      },
    ],
  ],
];
