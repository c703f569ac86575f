import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { databaseCounters } from '../database/database-counters.js';
import { PrimaryStatus } from '../database/primary-status.js';
import { driverPool } from '../internals/typeorm-driver.js';
import { ReadReplicas } from '../database/read-replicas.js';

/** Histogram buckets (seconds) of request durations: the SLOs' latency thresholds are among them. */
export const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Refreshes of the token signing keys: how many failed, and when one last succeeded (epoch ms). */
export interface KeyRefreshes {
  failures: number;
  lastSuccessAt?: number;
}

/** Prometheus metrics of this process, served on METRICS_PORT (MetricsServer). */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly grpcHandled = new Counter({
    name: 'grpc_server_handled_total',
    help: 'gRPC calls completed on the server by method and status code',
    labelNames: ['grpc_service', 'grpc_method', 'grpc_code'] as const,
    registers: [this.registry],
  });

  readonly grpcHandlingSeconds = new Histogram({
    name: 'grpc_server_handling_seconds',
    help: 'gRPC call duration on the server by method and status code',
    labelNames: ['grpc_service', 'grpc_method', 'grpc_code'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly replicas: ReadReplicas,
    private readonly primary: PrimaryStatus,
  ) {
    collectDefaultMetrics({ register: this.registry });
    const poolGauge = (name: string, help: string, read: (pool: pg.Pool) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          const current = driverPool(dataSource);
          this.set(current ? read(current) : 0);
        },
      });
    poolGauge('db_pool_connections', 'Connections open in the database pool', (p) => p.totalCount);
    poolGauge(
      'db_pool_idle_connections',
      'Idle connections in the database pool',
      (p) => p.idleCount,
    );
    poolGauge(
      'db_pool_waiting_requests',
      'Queries waiting for a pool connection',
      (p) => p.waitingCount,
    );
  }

  // Authentication (src/auth): refusals only; an accepted token costs no sample.
  readonly authRejections = new Counter({
    name: 'auth_rejections_total',
    help: 'Requests refused for their credentials: 401 (no or invalid token) and 403 (scope), by transport and reason',
    labelNames: ['transport', 'status', 'reason'] as const,
    registers: [this.registry],
  });

  // Read replicas (src/database/read-replicas.ts): read from their state when scraped, so the
  // database layer knows nothing of metrics.
  readonly dbListReads = new Counter({
    name: 'db_list_reads_total',
    help: 'List endpoint queries (pages and totals) by the pool that served them',
    labelNames: ['pool'] as const,
    registers: [this.registry],
    collect: () => {
      this.dbListReads.reset();
      this.dbListReads.inc({ pool: 'primary' }, this.replicas.reads.primary);
      this.dbListReads.inc({ pool: 'replica' }, this.replicas.reads.replica);
    },
  });

  // Failover handling (src/database/): counted there, read when scraped.
  readonly dbFailoverRetries = this.countedElsewhere(
    'db_failover_retries_total',
    'Keyed creates run again after the primary went away, was unreachable or read-only',
    () => databaseCounters.failoverRetries,
  );

  readonly dbCommitOutcomeUnknown = this.countedElsewhere(
    'db_commit_outcome_unknown_total',
    'Writes answered 503 or retried because whether their commit happened (and reached the synchronous standby) is unknown',
    () => databaseCounters.commitOutcomesUnknown,
  );

  readonly dbReplicaLag = new Gauge({
    name: 'db_replica_lag_seconds',
    help: 'Delay of each read replica behind the primary at its last check',
    labelNames: ['replica'] as const,
    registers: [this.registry],
    collect: () => {
      for (const { name, lagMs } of this.replicas.states()) {
        this.dbReplicaLag.set({ replica: name }, lagMs / 1000);
      }
    },
  });

  readonly dbReplicaUp = new Gauge({
    name: 'db_replica_up',
    help: 'Whether each read replica answered its last check (1) or not (0)',
    labelNames: ['replica'] as const,
    registers: [this.registry],
    collect: () => {
      for (const { name, up } of this.replicas.states()) {
        this.dbReplicaUp.set({ replica: name }, up ? 1 : 0);
      }
    },
  });

  // The primary database (src/database/primary-status.ts, written by the readiness checks).
  readonly dbPrimaryUp = new Gauge({
    name: 'db_primary_up',
    help: 'Whether the last readiness check found the primary database writable (1) or not (0)',
    registers: [this.registry],
    collect: () => {
      this.dbPrimaryUp.set(this.primary.up ? 1 : 0);
    },
  });

  /**
   * The token signing keys' refreshes (src/auth/jwks-cache.ts), read when scraped from the source
   * the auth layer hands over (it sits above this one). With authentication off nothing is
   * fetched: 0 failures, and 0 as "never succeeded".
   */
  private keyRefreshes: () => KeyRefreshes = () => ({ failures: 0 });

  readKeyRefreshesFrom(source: () => KeyRefreshes): void {
    this.keyRefreshes = source;
  }

  readonly authJwksRefreshFailures = this.countedElsewhere(
    'auth_jwks_refresh_failures_total',
    'Fetches of the token signing keys (JWKS) that failed; the keys in hand stay in use',
    () => this.keyRefreshes().failures,
  );

  readonly authJwksLastRefreshSuccess = new Gauge({
    name: 'auth_jwks_last_refresh_success_timestamp_seconds',
    help: 'When the token signing keys (JWKS) were last fetched successfully (Unix time; 0: never)',
    registers: [this.registry],
    collect: () => {
      const at = this.keyRefreshes().lastSuccessAt;
      this.authJwksLastRefreshSuccess.set(at === undefined ? 0 : at / 1000);
    },
  });

  /** A counter that a lower layer keeps as a plain number, read when scraped. */
  private countedElsewhere(name: string, help: string, read: () => number): Counter {
    return new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }
}
