import { BYTE_SIZE, EnvironmentVariables, validateEnv } from './env.validation.js';

const UNIT_BYTES: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

export function parseByteSize(value: string): number {
  const match = BYTE_SIZE.exec(value.trim());
  if (!match) throw new Error(`not a byte size: ${value}`);
  return Number(match[1]) * UNIT_BYTES[(match[2] ?? 'b').toLowerCase()];
}

export interface DatabaseSettings {
  /** Unset: the service starts an embedded PostgreSQL (see DatabaseServer). */
  url: string | undefined;
  poolSize: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /** TCP keepalive idle time in seconds; 0: no keepalives. */
  keepAliveIdleS: number;
  /** Pooled connections are replaced once this old, in seconds; 0: never. */
  maxLifetimeS: number;
  retryAttempts: number;
  /** How long a keyed create is retried after a failover error, in ms; 0: never. */
  failoverRetryMs: number;
  migrateOnBoot: boolean;
  /** Streaming replicas the list endpoints read from (DATABASE_READ_URLS); empty: none. */
  readUrls: readonly string[];
  replicaMaxLagMs: number;
  /** DB_CA_FILE: TLS to every database connection, verified against this CA (verify-full). */
  caFile?: string;
}

/** Admission control (OVERLOAD_*): docs/overload.md. */
export interface OverloadSettings {
  /** `fixed`: the limit is `max`, always; `adaptive`: it follows latency between `min` and `max`. */
  mode: 'adaptive' | 'fixed';
  min: number;
  max: number;
  /** Where the adaptive limit starts. */
  initial: number;
  /** The longest a request waits in the queue while the queue drains (CoDel's interval). */
  queueTimeoutMs: number;
  /** The Retry-After of a rejection, in seconds. */
  retryAfterS: number;
  /** Open HTTP connections past which the longest idle one is closed. */
  maxConnections: number;
}

/** Bearer-token authentication (AUTH_*); `mode: 'none'` turns it off. */
export interface AuthSettings {
  mode: 'jwt' | 'none';
  /** True when AUTH_MODE=none was set explicitly (rather than defaulted). */
  explicitlyOff: boolean;
  jwksUrl: string | undefined;
  issuer: string | undefined;
  audience: string | undefined;
  algorithms: readonly string[];
  clockToleranceS: number;
  jwksRefreshS: number;
}

/**
 * The typed settings of one running service, built once from the validated environment.
 * It is also the injection token: tests provide their own instance.
 */
export class AppConfig {
  readonly production: boolean;
  /** Address the HTTP and gRPC servers bind to. */
  readonly host: string;
  readonly port: number;
  readonly grpcPort: number;
  /** Port of the Prometheus /metrics server (0: any free port). */
  readonly metricsPort: number;
  readonly auth: AuthSettings;
  readonly apiKeys: readonly string[];
  /** SHA-256 digests (lower-case hex) of the static SCIM provider tokens (SCIM_TOKEN_SHA256). */
  readonly scimTokenDigests: readonly string[];
  readonly logLevel: EnvironmentVariables['LOG_LEVEL'];
  readonly bodyLimitBytes: number;
  readonly shutdownDrainMs: number;
  readonly shutdownTimeoutMs: number;
  readonly database: DatabaseSettings;
  readonly idempotency: { waitMs: number; ttlHours: number; purgeIntervalMs: number };
  /** The change feed (CHANGES_*). */
  readonly changes: { retentionHours: number; purgeIntervalMs: number; pollIntervalMs: number };
  readonly overload: OverloadSettings;
  /** Where an embedded PostgreSQL keeps its data and listens, when DATABASE_URL is unset. */
  readonly embeddedDatabase: { dataDir: string; port: number };

  constructor(values: Omit<AppConfig, never>) {
    Object.assign(this, values);
  }

  static fromEnv(env: EnvironmentVariables): AppConfig {
    const embedded = env.DATABASE_URL === undefined;
    return new AppConfig({
      production: env.NODE_ENV === 'production',
      host: env.HOST,
      port: env.PORT,
      grpcPort: env.GRPC_PORT,
      metricsPort: env.METRICS_PORT,
      auth: {
        mode: env.AUTH_MODE ?? (env.AUTH_JWKS_URL ? 'jwt' : 'none'),
        explicitlyOff: env.AUTH_MODE === 'none',
        jwksUrl: env.AUTH_JWKS_URL,
        issuer: env.AUTH_ISSUER,
        audience: env.AUTH_AUDIENCE,
        algorithms: [...new Set(env.AUTH_ALGORITHMS.split(',').map((name) => name.trim()))],
        clockToleranceS: env.AUTH_CLOCK_TOLERANCE_S,
        jwksRefreshS: env.AUTH_JWKS_REFRESH_S,
      },
      apiKeys: (env.API_KEYS ?? '')
        .split(',')
        .map((key) => key.trim())
        .filter((key) => key.length > 0),
      scimTokenDigests: (env.SCIM_TOKEN_SHA256 ?? '')
        .split(',')
        .map((digest) => digest.trim().toLowerCase())
        .filter((digest) => digest.length > 0),
      logLevel: env.LOG_LEVEL,
      bodyLimitBytes: parseByteSize(env.BODY_LIMIT),
      shutdownDrainMs: env.SHUTDOWN_DRAIN_MS,
      shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
      embeddedDatabase: { dataDir: env.PG_DATA_DIR, port: env.PG_PORT },
      overload: {
        mode: env.OVERLOAD_MODE,
        min: env.OVERLOAD_MIN_IN_FLIGHT,
        max: env.OVERLOAD_MAX_IN_FLIGHT,
        // Room for a burst from the first request; the limit falls as soon as latency shows queueing.
        initial: Math.min(env.OVERLOAD_MAX_IN_FLIGHT, Math.max(env.OVERLOAD_MIN_IN_FLIGHT, 100)),
        queueTimeoutMs: env.OVERLOAD_QUEUE_TIMEOUT_MS,
        retryAfterS: env.OVERLOAD_RETRY_AFTER_S,
        maxConnections: env.OVERLOAD_MAX_CONNECTIONS,
      },
      idempotency: {
        waitMs: env.IDEMPOTENCY_WAIT_MS,
        ttlHours: env.IDEMPOTENCY_KEY_TTL_HOURS,
        purgeIntervalMs: env.IDEMPOTENCY_PURGE_INTERVAL_MS,
      },
      changes: {
        retentionHours: env.CHANGES_RETENTION_HOURS,
        purgeIntervalMs: env.CHANGES_PURGE_INTERVAL_MS,
        pollIntervalMs: env.CHANGES_POLL_INTERVAL_MS,
      },
      database: {
        url: env.DATABASE_URL,
        poolSize: env.DB_POOL_SIZE,
        connectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS,
        statementTimeoutMs: env.DB_STATEMENT_TIMEOUT_MS,
        keepAliveIdleS: env.DB_KEEPALIVE_IDLE_S,
        maxLifetimeS: env.DB_MAX_LIFETIME_S,
        retryAttempts: env.DB_RETRY_ATTEMPTS,
        failoverRetryMs: env.DB_FAILOVER_RETRY_MS,
        readUrls: (env.DATABASE_READ_URLS ?? '')
          .split(',')
          .map((url) => url.trim())
          .filter((url) => url.length > 0),
        replicaMaxLagMs: env.DB_REPLICA_MAX_LAG_MS,
        caFile: env.DB_CA_FILE,
        migrateOnBoot:
          env.MIGRATE_ON_BOOT === undefined
            ? embedded
            : env.MIGRATE_ON_BOOT === 'true' || env.MIGRATE_ON_BOOT === '1',
      },
    });
  }
}

/**
 * Reads process.env: the only place in the service that does. src/telemetry.ts calls it too,
 * before Nest starts, for the OTEL_* variables.
 */
export function loadEnv(): EnvironmentVariables {
  return validateEnv(process.env);
}
