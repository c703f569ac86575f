/**
 * What a log line may say about an error: what failed and where, never the data involved.
 *
 * An error from the database driver carries the statement's `parameters` and `query` text
 * (TypeORM's QueryFailedError), and PostgreSQL's `detail` quotes the row or key at fault
 * ("Key (lower(email))=(ada@example.com) already exists"); `where` can hold statement text with
 * values a function inlined, `hint` whatever a RAISE put there, `internalQuery` more SQL. So the
 * logged form is built from an allow-list: the error's type, message and stack frames, and the
 * fields that name the failure (SQLSTATE `code`, `constraint`, `table`, `column`, ...). Everything
 * else is left out, whatever a library adds next.
 *
 * PostgreSQL's own messages name objects, not values, with two exceptions whose messages are
 * replaced by REDACTED (the code still says what failed): data exceptions (SQLSTATE class 22,
 * `invalid input syntax for type integer: "…"` quotes the input) and anything a PL/pgSQL RAISE
 * wrote (a trigger's message may say anything).
 *
 * The root logger applies this to every `err` it writes (src/observability/logging.ts), so no
 * call site has to remember it.
 */
export const REDACTED = '[redacted]';

/** The fields of an error (or its cause) that are logged as they are. */
const KEPT_FIELDS = [
  // SQLSTATE for database errors, ECONNREFUSED and the like for network ones
  'code',
  'errno',
  'syscall',
  'address',
  'port',
  // PostgreSQL's error fields that name objects, never values
  'severity',
  'constraint',
  'table',
  'column',
  'schema',
  'dataType',
  'routine',
] as const;

/** Nested causes followed at most this deep, and at most this many errors of an AggregateError. */
const MAX_DEPTH = 3;
const MAX_ERRORS = 5;

export interface LoggableError {
  type: string;
  message: string;
  stack?: string;
  cause?: LoggableError;
  errors?: LoggableError[];
  [field: string]: unknown;
}

/** The objects this module made: logging one again returns it as it is. */
const made = new WeakSet<object>();

type Fields = Record<string, unknown>;

function isDatabaseError(error: Fields): boolean {
  return (
    typeof error.severity === 'string' &&
    typeof error.code === 'string' &&
    /^[0-9A-Z]{5}$/.test(error.code)
  );
}

/** A message that may quote the data at fault is replaced; see the module comment. */
function messageOf(error: Fields): string {
  const message = typeof error.message === 'string' ? error.message : '';
  if (!isDatabaseError(error)) return message;
  const code = error.code as string;
  const quotesData =
    code.startsWith('22') || code.startsWith('P0') || error.routine === 'exec_stmt_raise';
  return quotesData ? REDACTED : message;
}

function typeOf(error: object): string {
  const name = (error as Fields).name;
  const constructorName = error.constructor?.name;
  if (constructorName && constructorName !== 'Object') return constructorName;
  return typeof name === 'string' && name ? name : 'Error';
}

/**
 * The stack's frames under a first line rebuilt from the logged type and message: the original
 * first line repeats the raw message, and a stack handed over separately (Nest's
 * `logger.error(message, stack)`) may even be another error's.
 */
function stackOf(error: Fields, type: string, message: string): string | undefined {
  if (typeof error.stack !== 'string') return undefined;
  const frames = error.stack.split('\n').filter((line) => /^\s+at /.test(line));
  return [`${type}: ${message}`, ...frames].join('\n');
}

function loggable(error: unknown, depth: number): LoggableError {
  if (typeof error !== 'object' || error === null) {
    return { type: typeof error, message: String(error) };
  }
  if (made.has(error)) return error as LoggableError;
  const fields = error as Fields;
  const type = typeOf(error);
  const message = messageOf(fields);
  const result: LoggableError = { type, message };
  for (const field of KEPT_FIELDS) {
    const value = fields[field];
    if (typeof value === 'string' || typeof value === 'number') result[field] = value;
  }
  const stack = stackOf(fields, type, message);
  if (stack) result.stack = stack;
  if (depth < MAX_DEPTH) {
    if (fields.cause !== undefined) result.cause = loggable(fields.cause, depth + 1);
    if (Array.isArray(fields.errors)) {
      result.errors = fields.errors
        .slice(0, MAX_ERRORS)
        .map((inner: unknown) => loggable(inner, depth + 1));
    }
  }
  made.add(result);
  return result;
}

/** The form of `error` a log line carries (see the module comment). Idempotent. */
export function loggableError(error: unknown): LoggableError {
  return loggable(error, 0);
}
