import { plainToInstance, Transform } from 'class-transformer';
import { IsIn, IsInt, Matches, Max, Min, validateSync } from 'class-validator';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const BOOLEAN = ['true', 'false', '1', '0'] as const;
const HTTP_URL = /^https?:\/\/\S+$/;
/** The OTLP exporters installed (the specification's three transports). */
export const OTLP_PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'] as const;
/** The OTEL_PROPAGATORS values whose propagators are installed. */
export const PROPAGATORS = ['tracecontext', 'baggage', 'b3', 'b3multi', 'jaeger', 'none'] as const;
const PROPAGATOR_LIST = new RegExp(
  `^\\s*(${PROPAGATORS.join('|')})(\\s*,\\s*(${PROPAGATORS.join('|')}))*\\s*$`,
);
/** The samplers the OpenTelemetry SDK builds from OTEL_TRACES_SAMPLER. */
const TRACES_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
/** Asymmetric JWS algorithms a token may be signed with (jose's names). */
export const TOKEN_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
const ALGORITHM = `\\s*(?:${TOKEN_ALGORITHMS.join('|')})\\s*`;
const ALGORITHM_LIST = new RegExp(`^${ALGORITHM}(?:,${ALGORITHM})*$`);
const AUTH_MODES = ['jwt', 'none'] as const;
const OVERLOAD_MODES = ['adaptive', 'fixed'] as const;
/** `100kb`, `1mb`, `2048`: what body-parser's `limit` accepts, restricted to whole units. */
export const BYTE_SIZE = /^(\d+)\s*(b|kb|mb)?$/i;

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;

/**
 * An integer setting from `min` to `max`: plain decimal digits converted to a number, then
 * checked. The decorators are applied as if stacked with IsInt nearest the property, so with
 * stopAtFirstError a non-number is named as such, not as out of range.
 */
function EnvInt(min: number, max: number): PropertyDecorator {
  const nearestFirst = [IsInt(), Max(max), Min(min), Transform(toInt)];
  return (target, property) => {
    for (const decorate of nearestFirst) decorate(target, property);
  };
}

/**
 * Every environment variable the service reads, with its default. With stopAtFirstError the
 * decorator nearest the property is checked first, so `@IsInt()` sits last. Values arrive as strings;
 * numbers are converted only when they are plain decimal digits, so `PORT=3000abc` is an error
 * rather than 3000.
 */
export class EnvironmentVariables {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV = 'development';

  @Matches(/^[0-9a-fA-F.:]+$|^localhost$/, {
    message: 'HOST must be an IP address to bind to, such as 0.0.0.0',
  })
  HOST = '0.0.0.0';

  @EnvInt(0, 65535)
  PORT = 3000;

  @EnvInt(0, 65535)
  GRPC_PORT = 5000;

  @Matches(/^postgres(ql)?:\/\/\S+$/, {
    message: 'DATABASE_URL must look like postgres://user:pass@host:5432/db',
  })
  DATABASE_URL?: string;

  // Comma-separated; a password holding a comma must be percent-encoded, as in any URL.
  @Matches(/^postgres(ql)?:\/\/[^\s,]+(\s*,\s*postgres(ql)?:\/\/[^\s,]+)*$/, {
    message:
      'DATABASE_READ_URLS must be comma-separated URLs such as postgres://user:pass@replica:5432/db',
  })
  DATABASE_READ_URLS?: string;

  API_KEYS?: string;

  // SHA-256 digests (hex) of the static bearer tokens identity providers send to /scim/v2.
  @Matches(/^\s*[0-9a-fA-F]{64}\s*(,\s*[0-9a-fA-F]{64}\s*)*$/, {
    message: 'SCIM_TOKEN_SHA256 must be comma-separated SHA-256 digests (64 hex digits each)',
  })
  SCIM_TOKEN_SHA256?: string;

  // Authentication: see docs/authentication.md. Unset AUTH_MODE means jwt when AUTH_JWKS_URL
  // is set, else none; production must choose (validateEnv below).
  @IsIn(AUTH_MODES)
  AUTH_MODE?: (typeof AUTH_MODES)[number];

  @Matches(HTTP_URL, { message: 'AUTH_JWKS_URL must be an http(s) URL' })
  AUTH_JWKS_URL?: string;

  AUTH_ISSUER?: string;

  AUTH_AUDIENCE?: string;

  // Only asymmetric algorithms: with `none` or an HMAC algorithm allowed, anyone holding the
  // public key (or nothing at all) could mint a token.
  @Matches(ALGORITHM_LIST, {
    message: `AUTH_ALGORITHMS must be a comma-separated list of ${TOKEN_ALGORITHMS.join(', ')} (never none or an HMAC algorithm such as HS256)`,
  })
  AUTH_ALGORITHMS = 'RS256,ES256,EdDSA';

  @EnvInt(0, 3600)
  AUTH_CLOCK_TOLERANCE_S = 30;

  @EnvInt(30, 86_400)
  AUTH_JWKS_REFRESH_S = 600;

  // Prometheus /metrics is served on this port only, never on the API port.
  @EnvInt(0, 65535)
  METRICS_PORT = 9464;

  // Admission control (docs/overload.md): the concurrency limit adapts between the two bounds
  // (adaptive), or is OVERLOAD_MAX_IN_FLIGHT always (fixed); a request waits for a slot at most
  // OVERLOAD_QUEUE_TIMEOUT_MS (a tenth of it while a queue stands) before its 503.
  @IsIn(OVERLOAD_MODES)
  OVERLOAD_MODE: (typeof OVERLOAD_MODES)[number] = 'adaptive';

  @EnvInt(1, 100_000)
  OVERLOAD_MAX_IN_FLIGHT = 1000;

  @EnvInt(1, 100_000)
  OVERLOAD_MIN_IN_FLIGHT = 20;

  @EnvInt(1, 10_000)
  OVERLOAD_QUEUE_TIMEOUT_MS = 100;

  @EnvInt(1, 3600)
  OVERLOAD_RETRY_AFTER_S = 1;

  // Past this many open HTTP connections, each new one closes the connection idle the longest.
  @EnvInt(1, 1_000_000)
  OVERLOAD_MAX_CONNECTIONS = 4096;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  @Matches(BYTE_SIZE, { message: 'BODY_LIMIT must be a size such as 100kb, 1mb or 2048' })
  BODY_LIMIT = '100kb';

  @IsIn(BOOLEAN)
  MIGRATE_ON_BOOT?: (typeof BOOLEAN)[number];

  @EnvInt(0, 600_000)
  SHUTDOWN_DRAIN_MS = 5000;

  @EnvInt(0, 600_000)
  SHUTDOWN_TIMEOUT_MS = 10000;

  @EnvInt(1, 1000)
  DB_POOL_SIZE = 10;

  @EnvInt(100, 600_000)
  DB_CONNECT_TIMEOUT_MS = 2000;

  @EnvInt(0, 3_600_000)
  DB_STATEMENT_TIMEOUT_MS = 5000;

  // TCP keepalive on every database connection, in seconds (the kernel's unit): an idle connection
  // to a primary that vanished without closing it (node loss, network partition) is noticed about
  // 10 s after this much silence (Node then probes once a second, 10 times) and leaves the pool.
  // 0 turns keepalives off.
  @EnvInt(0, 7200)
  DB_KEEPALIVE_IDLE_S = 5;

  // A pooled connection is closed once this old (when next idle), so connections rebalance after
  // a failover or a scale-out behind a proxy or Service. 0: no limit.
  @EnvInt(0, 86_400)
  DB_MAX_LIFETIME_S = 300;

  @EnvInt(0, 100)
  DB_RETRY_ATTEMPTS = 5;

  // A keyed create (POST with Idempotency-Key) that fails because the primary went away or is not
  // reachable yet is run again, whole, on a fresh connection, until this long after its first
  // attempt (docs/failover.md): a planned switchover then costs a client a few seconds' wait, not
  // an error. 0: answer 503 at once.
  @EnvInt(0, 60_000)
  DB_FAILOVER_RETRY_MS = 10_000;

  // A replica further behind the primary than this is skipped until it catches up.
  @EnvInt(0, 3_600_000)
  DB_REPLICA_MAX_LAG_MS = 5000;

  // A PEM CA (a Secret mounted in the pod): every database connection then uses TLS and verifies
  // the server's certificate against it and the URL's host (verify-full). docs/deploying.md.
  DB_CA_FILE?: string;

  // Refuse to start without DB_CA_FILE (the prod overlay sets it), so TLS cannot be lost silently.
  @IsIn(BOOLEAN)
  DB_REQUIRE_TLS?: (typeof BOOLEAN)[number];

  @EnvInt(0, 60_000)
  IDEMPOTENCY_WAIT_MS = 2000;

  // Keys are kept at least 24 hours (docs/api.md, Idempotent creates).
  @EnvInt(24, 8760)
  IDEMPOTENCY_KEY_TTL_HOURS = 24;

  @EnvInt(0, 86_400_000)
  IDEMPOTENCY_PURGE_INTERVAL_MS = 60_000;

  // The change feed (docs/events.md): how long events are kept, how often each replica purges
  // older ones (0: never), and how often a process looks for new events while a long poll or a
  // watch stream waits (one query for all of them).
  @EnvInt(1, 8760)
  CHANGES_RETENTION_HOURS = 168;

  @EnvInt(0, 86_400_000)
  CHANGES_PURGE_INTERVAL_MS = 60_000;

  @EnvInt(20, 10_000)
  CHANGES_POLL_INTERVAL_MS = 200;

  @EnvInt(1, 65535)
  PG_PORT = 54329;

  PG_DATA_DIR = '.data/pg';

  // OpenTelemetry's standard variables (src/telemetry.ts reads them through validateEnv, before
  // Nest starts). The SDK itself also honours the others of the specification, such as
  // OTEL_TRACES_SAMPLER_ARG, OTEL_EXPORTER_OTLP_HEADERS and OTEL_BSP_SCHEDULE_DELAY.
  @Matches(/^(true|false)$/i, { message: 'OTEL_SDK_DISABLED must be true or false' })
  OTEL_SDK_DISABLED?: string;

  @Matches(HTTP_URL, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL' })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  @Matches(HTTP_URL, { message: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http(s) URL' })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;

  @IsIn(OTLP_PROTOCOLS)
  OTEL_EXPORTER_OTLP_PROTOCOL: (typeof OTLP_PROTOCOLS)[number] = 'http/protobuf';

  // The specification's per-signal override of the one above.
  @IsIn(OTLP_PROTOCOLS)
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: (typeof OTLP_PROTOCOLS)[number];

  // Read by the exporter itself, which would only log a warning and use its default for a bad
  // value: checked here so a typo stops the boot instead.
  @EnvInt(1, 600_000)
  OTEL_EXPORTER_OTLP_TIMEOUT?: number;

  @IsIn(['gzip', 'none'])
  OTEL_EXPORTER_OTLP_COMPRESSION?: 'gzip' | 'none';

  @Matches(PROPAGATOR_LIST, {
    message: `OTEL_PROPAGATORS must be a comma-separated list of ${PROPAGATORS.join(', ')}`,
  })
  OTEL_PROPAGATORS = 'tracecontext,baggage';

  OTEL_SERVICE_NAME = 'users-service';

  @IsIn(TRACES_SAMPLERS)
  OTEL_TRACES_SAMPLER: (typeof TRACES_SAMPLERS)[number] = 'parentbased_always_on';
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    // An operator's mistake, not the code's: the variables are named, a stack trace helps nobody.
    this.stack = `${this.name}: ${this.message}`;
  }
}

/**
 * Validates the environment once, at boot. Throws a ConfigError naming every bad variable,
 * not just the first. Empty values count as unset, as they do in most deployment tools.
 */
export function validateEnv(raw: Record<string, string | undefined>): EnvironmentVariables {
  const present = Object.fromEntries(
    Object.entries(raw).filter(([, value]) => value !== undefined && value.trim() !== ''),
  );
  const env = plainToInstance(EnvironmentVariables, present);
  const problems = validateSync(env, {
    skipMissingProperties: true,
    stopAtFirstError: true,
  }).flatMap((error) =>
    Object.values(error.constraints ?? {}).map((message) =>
      message.startsWith(error.property) ? message : `${error.property}: ${message}`,
    ),
  );
  if (env.NODE_ENV === 'production' && !env.DATABASE_URL) {
    problems.push(
      'DATABASE_URL is required when NODE_ENV=production: an embedded database inside a pod loses its data on restart',
    );
  }
  problems.push(
    ...authProblems(env),
    ...databaseProblems(env),
    ...tlsProblems(env),
    ...overloadProblems(env),
  );
  if (problems.length > 0) throw new ConfigError(problems);
  return env;
}

/**
 * A keyed create's key waits for a lock at most IDEMPOTENCY_WAIT_MS inside the message that
 * commits, which the statement timeout bounds as a whole: at or past it, the timeout would close
 * the connection first, and the client would get an unknown outcome (503) instead of 409.
 */
function databaseProblems(env: EnvironmentVariables): string[] {
  return env.DB_STATEMENT_TIMEOUT_MS > 0 && env.IDEMPOTENCY_WAIT_MS >= env.DB_STATEMENT_TIMEOUT_MS
    ? [
        `IDEMPOTENCY_WAIT_MS (${env.IDEMPOTENCY_WAIT_MS}) must be less than DB_STATEMENT_TIMEOUT_MS ` +
          `(${env.DB_STATEMENT_TIMEOUT_MS}), which bounds the statement that waits for the key`,
      ]
    : [];
}

/** The adaptive limit moves between its two bounds. */
function overloadProblems(env: EnvironmentVariables): string[] {
  return env.OVERLOAD_MIN_IN_FLIGHT > env.OVERLOAD_MAX_IN_FLIGHT
    ? [
        `OVERLOAD_MIN_IN_FLIGHT (${env.OVERLOAD_MIN_IN_FLIGHT}) must not be more than OVERLOAD_MAX_IN_FLIGHT (${env.OVERLOAD_MAX_IN_FLIGHT})`,
      ]
    : [];
}

// The URL parameters through which pg sets TLS itself, overriding the pool's settings.
const SSL_PARAMETER = /[?&](ssl|sslmode|sslrootcert|sslcert|sslkey|sslnegotiation)=/i;

/** The rules of DB_CA_FILE and DB_REQUIRE_TLS (the file is read with the pools: poolOptions). */
function tlsProblems(env: EnvironmentVariables): string[] {
  const file = env.DB_CA_FILE;
  if (!file) {
    return env.DB_REQUIRE_TLS === 'true' || env.DB_REQUIRE_TLS === '1'
      ? [
          "DB_CA_FILE is required when DB_REQUIRE_TLS=true: the CA that signed the database server's certificate (TLS, verify-full)",
        ]
      : [];
  }
  if (!env.DATABASE_URL) return ['DB_CA_FILE needs DATABASE_URL: the embedded database has no TLS'];
  return (['DATABASE_URL', 'DATABASE_READ_URLS'] as const)
    .filter((name) => SSL_PARAMETER.test(env[name] ?? ''))
    .map(
      (name) =>
        `${name}: leave out ssl, sslmode and sslrootcert when DB_CA_FILE is set: it turns on ` +
        'verify-full for every connection, and pg would let the URL override it',
    );
}

/** The rules between the AUTH_* variables, which no single-variable rule can say. */
function authProblems(env: EnvironmentVariables): string[] {
  const mode = env.AUTH_MODE ?? (env.AUTH_JWKS_URL ? 'jwt' : 'none');
  if (mode === 'none') {
    return env.NODE_ENV === 'production' && env.AUTH_MODE !== 'none'
      ? [
          'AUTH_JWKS_URL is required when NODE_ENV=production (with AUTH_ISSUER and AUTH_AUDIENCE); ' +
            'set AUTH_MODE=none instead only when a mesh decides who may call',
        ]
      : [];
  }
  const missing = (['AUTH_JWKS_URL', 'AUTH_ISSUER', 'AUTH_AUDIENCE'] as const).filter(
    (name) => !env[name],
  );
  return missing.length > 0 ? [`${missing.join(', ')} must be set when AUTH_MODE=jwt`] : [];
}
