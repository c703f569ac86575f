import { QueryFailedError } from 'typeorm';

interface DriverError {
  code?: string;
  constraint?: string;
  message?: string;
  name?: string;
}

function driverError(error: unknown): DriverError | undefined {
  if (error instanceof QueryFailedError) return error.driverError as DriverError;
  // Duck-typed: socket errors come from Node's own realm, where `instanceof Error` can fail (Jest).
  if (typeof error === 'object' && error !== null) return error;
  return undefined;
}

export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const driver = driverError(error);
  return driver?.code === '23505' && driver.constraint === constraint;
}

export function isForeignKeyViolation(error: unknown, constraint: string): boolean {
  const driver = driverError(error);
  return driver?.code === '23503' && driver.constraint === constraint;
}

/** What the service does about a failure of the database, decided by its code alone. */
interface Failure {
  /**
   * The connection it happened on is gone or unusable: the pool drops it (another one may well
   * work), and a COMMIT on it has an unknown outcome.
   */
  connectionLost: boolean;
  /**
   * The primary is going away, gone, unreachable or read-only for now: the same work may succeed
   * on a fresh connection a moment later (a keyed create is run again: failover-retry.ts).
   */
  failover: boolean;
  /** The database cannot serve now: 503 / UNAVAILABLE, and readiness fails meanwhile. */
  unavailable: boolean;
}

const LOST: Failure = { connectionLost: true, failover: true, unavailable: true };
const AWAY: Failure = { connectionLost: false, failover: true, unavailable: true };
const BUSY: Failure = { connectionLost: false, failover: false, unavailable: true };

/**
 * Every failure code the service tells apart, in one table: SQLSTATEs (class 08 matched as a
 * class), Node's socket and DNS codes, and the few failures pg and TypeORM report by message only.
 * - 08xxx connection exceptions (08007, transaction_resolution_unknown: a COMMIT whose outcome
 *   is unknown, CommitOutcomeUnknownError), 57P01 admin_shutdown (a fast shutdown, a demotion,
 *   pg_terminate_backend), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting, stopping, in
 *   recovery), 57P04 database_dropped, 57P05 idle_session_timeout, a reset, broken or timed-out
 *   socket: the connection is gone.
 * - 25006 read_only_sql_transaction (a demoted primary, a standby reached through a proxy that has
 *   not switched yet), a connection refused or unreachable: the primary is not there for now.
 * - 53300 too many connections, 57014 a statement cancelled by the statement timeout, a full pool
 *   ("timeout exceeded when trying to connect"), a name that does not resolve: unavailable, but a
 *   retry would only prolong an overload or a configuration error.
 */
const BY_CODE: Record<string, Failure> = {
  '57P01': LOST,
  '57P02': LOST,
  '57P03': LOST,
  '57P04': LOST,
  '57P05': LOST,
  ECONNRESET: LOST,
  EPIPE: LOST,
  ETIMEDOUT: LOST,
  '25006': AWAY,
  ECONNREFUSED: AWAY,
  ECONNABORTED: AWAY,
  EHOSTUNREACH: AWAY,
  ENETUNREACH: AWAY,
  '53300': BUSY,
  '57014': BUSY,
  ENOTFOUND: BUSY,
  EAI_AGAIN: BUSY,
};
const CONNECTION_EXCEPTION_CLASS = '08';
const BY_MESSAGE: [string, Failure][] = [
  ['Connection terminated', LOST],
  // pg's refusal of a query on a client whose connection broke (or the service retired).
  ['Client has encountered a connection error', LOST],
  ['timeout exceeded when trying to connect', BUSY],
  ['Connection is not established', BUSY],
];
/** TypeORM's error when the connection under a transaction died between two statements. */
const RELEASED_QUERY_RUNNER = 'QueryRunnerAlreadyReleasedError';

/** The row of the table for `error`, or undefined when it is a failure of the query itself. */
function failureOf(error: unknown): Failure | undefined {
  const driver = driverError(error);
  if (!driver) return undefined;
  const code = driver.code ?? '';
  if (code.startsWith(CONNECTION_EXCEPTION_CLASS)) return LOST;
  const byCode = BY_CODE[code];
  if (byCode) return byCode;
  if ((error as DriverError).name === RELEASED_QUERY_RUNNER) return AWAY;
  const message = driver.message ?? '';
  return BY_MESSAGE.find(([text]) => message.includes(text))?.[1];
}

/**
 * The connection the statement ran on is gone (the server closed it, the socket broke): the pool
 * drops that connection, and another one may well work.
 */
export function isConnectionLost(error: unknown): boolean {
  return failureOf(error)?.connectionLost ?? false;
}

/**
 * The primary went away, is not reachable yet, or is read-only for now, so that the same work
 * may succeed on a fresh connection a moment later (never a query's own failure).
 */
export function isPrimaryAway(error: unknown): boolean {
  return failureOf(error)?.failover ?? false;
}

/**
 * True when the database cannot be reached or is going away, as opposed to a query that failed:
 * 503 / UNAVAILABLE, and readiness fails meanwhile too (HealthService).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return failureOf(error)?.unavailable ?? false;
}

// Node's codes for a server certificate that fails verification (the chain, or the host name).
const CERTIFICATE_REFUSED = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * A connection refused because the server's TLS certificate failed verification, as an error
 * that says what to check (Node's own message names neither the setting nor the host name);
 * undefined for any other error.
 */
export function certificateRefusal(error: unknown): Error | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !CERTIFICATE_REFUSED.has(code)) return undefined;
  return Object.assign(
    new Error(
      `the database server's TLS certificate failed verification (${(error as Error).message}): ` +
        'DB_CA_FILE must hold the CA that signed it, and the host in the database URL must be a ' +
        'name or address the certificate lists',
      { cause: error },
    ),
    { code },
  );
}
