import pg from 'pg';
import { QueryFailedError } from 'typeorm';
import { loggableError, REDACTED } from './loggable-error.js';
import { capturingLogger } from '../../test/support/capturing-logger.js';

const EMAIL = 'ada.private@example.com';
const NAME = 'Ada Private';

/** A driver error as pg builds it from PostgreSQL's ErrorResponse. */
function databaseError(message: string, fields: Record<string, string>): pg.DatabaseError {
  return Object.assign(new pg.DatabaseError(message, message.length, 'error'), {
    severity: 'ERROR',
    file: 'nbtinsert.c',
    line: '666',
    ...fields,
  });
}

const uniqueViolation = () =>
  databaseError('duplicate key value violates unique constraint "users_email_lower_key"', {
    code: '23505',
    detail: `Key (lower(email::text))=(${EMAIL}) already exists.`,
    schema: 'public',
    table: 'users',
    constraint: 'users_email_lower_key',
    routine: '_bt_check_unique',
  });

/** What TypeORM throws for it: the statement and its parameters on top of the driver's fields. */
const queryFailed = (driverError: pg.DatabaseError) =>
  new QueryFailedError(
    `UPDATE "users" SET "name" = $1, "email" = $2 WHERE "id" = $3`,
    [NAME, EMAIL, 7],
    driverError,
  );

describe(loggableError.name, () => {
  it("keeps what failed and where from TypeORM's error, and none of the data", () => {
    const logged = loggableError(queryFailed(uniqueViolation()));
    expect(logged).toEqual({
      type: 'QueryFailedError',
      message: 'duplicate key value violates unique constraint "users_email_lower_key"',
      code: '23505',
      severity: 'ERROR',
      schema: 'public',
      table: 'users',
      constraint: 'users_email_lower_key',
      routine: '_bt_check_unique',
      stack: expect.stringMatching(
        /^QueryFailedError: duplicate key value violates unique constraint "users_email_lower_key"\n\s+at /,
      ),
    });
    expect(JSON.stringify(logged)).not.toMatch(/ada\.private|Ada Private|UPDATE|\$1/);
  });

  it('drops detail, hint, where, internal query and position from a driver error', () => {
    const error = databaseError('null value in column "name" of relation "users"', {
      code: '23502',
      detail: `Failing row contains (7, null, ${EMAIL}).`,
      hint: `ask ${NAME}`,
      where: `SQL statement "INSERT INTO users VALUES ('${EMAIL}')"`,
      internalQuery: `SELECT '${EMAIL}'`,
      position: '12',
      column: 'name',
    });
    const logged = loggableError(error);
    expect(Object.keys(logged).sort()).toEqual(
      ['code', 'column', 'message', 'severity', 'stack', 'type'].sort(),
    );
    expect(JSON.stringify(logged)).not.toContain(EMAIL);
    expect(JSON.stringify(logged)).not.toContain(NAME);
  });

  it('redacts the messages of data exceptions, which quote the input', () => {
    const error = databaseError(`invalid input syntax for type integer: "${EMAIL}"`, {
      code: '22P02',
      routine: 'pg_strtoint32_safe',
    });
    const logged = loggableError(queryFailed(error));
    expect(logged).toMatchObject({ code: '22P02', message: REDACTED });
    expect(logged.stack).toMatch(/^QueryFailedError: \[redacted\]\n/);
    expect(JSON.stringify(logged)).not.toContain(EMAIL);
  });

  it('redacts what a PL/pgSQL RAISE wrote, whatever its SQLSTATE', () => {
    for (const code of ['P0001', '23514', 'XX000']) {
      const error = databaseError(`refusing ${NAME} <${EMAIL}>`, {
        code,
        routine: 'exec_stmt_raise',
        constraint: 'users_privacy_probe',
      });
      const logged = loggableError(error);
      expect(logged).toMatchObject({ code, constraint: 'users_privacy_probe', message: REDACTED });
      expect(JSON.stringify(logged)).not.toMatch(/ada\.private|Ada Private/);
    }
  });

  it('keeps the messages and network fields of connection errors', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
      errno: -111,
      syscall: 'connect',
      address: '127.0.0.1',
      port: 5432,
    });
    expect(loggableError(refused)).toEqual({
      type: 'Error',
      message: 'connect ECONNREFUSED 127.0.0.1:5432',
      code: 'ECONNREFUSED',
      errno: -111,
      syscall: 'connect',
      address: '127.0.0.1',
      port: 5432,
      stack: expect.stringMatching(/^Error: connect ECONNREFUSED 127\.0\.0\.1:5432\n/),
    });
  });

  it('follows causes and aggregated errors, reducing each', () => {
    const wrapped = new Error('create failed', { cause: queryFailed(uniqueViolation()) });
    const aggregate = new AggregateError([uniqueViolation(), new Error('second')], 'several');
    const logged = loggableError(wrapped);
    expect(logged.cause).toMatchObject({ type: 'QueryFailedError', code: '23505' });
    expect(loggableError(aggregate).errors).toEqual([
      expect.objectContaining({ type: 'DatabaseError', constraint: 'users_email_lower_key' }),
      expect.objectContaining({ type: 'Error', message: 'second' }),
    ]);
    expect(JSON.stringify([logged, loggableError(aggregate)])).not.toContain(EMAIL);
  });

  it('rebuilds the first stack line from the logged message: a stack handed over may be another error', () => {
    // Nest's logger.error(message, stack) contract: nestjs-pino makes an Error of the message and
    // gives it the stack it was handed.
    const handed = Object.assign(new Error('call failed'), {
      stack: `error: refusing ${EMAIL}\n    at Parser.parseErrorMessage (parser.js:1:1)`,
    });
    expect(loggableError(handed).stack).toBe(
      'Error: call failed\n    at Parser.parseErrorMessage (parser.js:1:1)',
    );
  });

  it('handles values that are not errors, and is idempotent', () => {
    expect(loggableError('boom')).toEqual({ type: 'string', message: 'boom' });
    expect(loggableError({ code: 'ECONNRESET', message: 'reset' })).toEqual({
      type: 'Error',
      code: 'ECONNRESET',
      message: 'reset',
    });
    const once = loggableError(queryFailed(uniqueViolation()));
    expect(loggableError(once)).toBe(once);
  });
});

describe('the root logger', () => {
  it('writes every err in its loggable form, also when the message comes from the error', () => {
    // The service's logger settings, writing to lines the test reads.
    const { logger, lines } = capturingLogger();
    const redacted = queryFailed(
      databaseError(`refusing ${EMAIL}`, { code: 'P0001', routine: 'exec_stmt_raise' }),
    );
    logger.error(redacted);
    logger.error({ err: redacted, context: 'HTTP' });
    logger.warn({ err: queryFailed(uniqueViolation()), requestId: 'r-1' }, 'PATCH failed');
    logger.child({ context: 'Jobs' }).error({ err: redacted }, 'purge failed');
    const written = lines();
    expect(written.map((line) => [line.msg, (line.err as { code?: string }).code])).toEqual([
      [REDACTED, 'P0001'],
      [REDACTED, 'P0001'],
      ['PATCH failed', '23505'],
      ['purge failed', 'P0001'],
    ]);
    expect(written[2].err).not.toHaveProperty('parameters');
    expect(written[2].err).not.toHaveProperty('query');
    expect(written[2].err).not.toHaveProperty('detail');
    expect(JSON.stringify(written)).not.toMatch(/ada\.private|Ada Private/);
  });
});
