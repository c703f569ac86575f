import { QueryFailedError } from 'typeorm';

interface DriverError {
  code?: string;
  constraint?: string;
  message?: string;
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

/**
 * The server closed the connection the statement ran on (pg_terminate_backend, a restarted
 * PgBouncer or server): the pool drops that connection, and another one may well work.
 */
export function isConnectionLost(error: unknown): boolean {
  const driver = driverError(error);
  const message = driver?.message ?? '';
  return (
    driver?.code === '57P01' ||
    message.includes('Connection terminated') ||
    message.includes('Client has encountered a connection error')
  );
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * True when the database cannot be reached or is going away, as opposed to a query that failed:
 * connection refused or reset, pool connect timeouts, server shutdown (57P01..57P03), connection
 * exceptions (class 08), too many connections (53300), statement or lock timeouts (57014 is
 * a query cancelled by statement_timeout or the service's own cancel: the database is too slow to
 * answer), and a write that met a read-only node (25006: DATABASE_URL points at a standby, or at
 * a primary being failed over); readiness fails meanwhile too (HealthService).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const driver = driverError(error);
  if (!driver) return false;
  const code = driver.code ?? '';
  if (NETWORK_CODES.has(code)) return true;
  if (
    code.startsWith('08') ||
    code.startsWith('57P') ||
    code === '53300' ||
    code === '57014' ||
    code === '25006'
  ) {
    return true;
  }
  // TypeORM's error when the connection under a transaction died between two statements.
  if ((error as { name?: string }).name === 'QueryRunnerAlreadyReleasedError') return true;
  const message = driver.message ?? '';
  return (
    isConnectionLost(error) ||
    message.includes('timeout exceeded when trying to connect') ||
    message.includes('Connection is not established')
  );
}
