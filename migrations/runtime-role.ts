import type { QueryRunner } from 'typeorm';

/**
 * The NOLOGIN group role whose members the service logs in as (deploy/sql/roles.sql creates it
 * and the login roles). The migrations grant it exactly the privileges the service's statements
 * need, table by table; the migration role keeps ownership, DDL and TRUNCATE. No login name is
 * written in the code: a DBA chooses those and makes the service's a member of this role.
 */
export const RUNTIME_ROLE = 'users_service_runtime';

/**
 * Runs `statement` only when the runtime role exists: a database set up with roles.sql has it; a
 * development database with one superuser (the embedded one, the tests') has not, and needs no
 * grants.
 */
async function forRuntimeRole(queryRunner: QueryRunner, statement: string): Promise<void> {
  const roles = (await queryRunner.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [
    RUNTIME_ROLE,
  ])) as unknown[];
  if (roles.length > 0) await queryRunner.query(statement);
}

const quoted = (queryRunner: QueryRunner, name: string) =>
  queryRunner.connection.driver.escape(name);
const grant = (queryRunner: QueryRunner, what: string) =>
  forRuntimeRole(queryRunner, `GRANT ${what} TO "${RUNTIME_ROLE}"`);
const revoke = (queryRunner: QueryRunner, what: string) =>
  forRuntimeRole(queryRunner, `REVOKE ${what} FROM "${RUNTIME_ROLE}"`);

/**
 * Grants `privileges` (`SELECT, INSERT`) on `table` to the runtime role. Every migration that
 * creates a table, or makes the service use one in a new way, calls this in up() and
 * revokeFromRuntime in down() (docs/development.md).
 */
export const grantToRuntime = (queryRunner: QueryRunner, privileges: string, table: string) =>
  grant(queryRunner, `${privileges} ON TABLE ${quoted(queryRunner, table)}`);

export const revokeFromRuntime = (queryRunner: QueryRunner, privileges: string, table: string) =>
  revoke(queryRunner, `${privileges} ON TABLE ${quoted(queryRunner, table)}`);

/**
 * SELECT on the identity sequence of `table`'s `column`: reading where it stands (its last value),
 * never drawing from it (that needs USAGE or UPDATE, and an INSERT needs neither).
 */
export async function grantSequenceReadToRuntime(
  queryRunner: QueryRunner,
  table: string,
  column: string,
): Promise<void> {
  await grant(queryRunner, `SELECT ON SEQUENCE ${await sequenceOf(queryRunner, table, column)}`);
}

export async function revokeSequenceReadFromRuntime(
  queryRunner: QueryRunner,
  table: string,
  column: string,
): Promise<void> {
  await revoke(queryRunner, `SELECT ON SEQUENCE ${await sequenceOf(queryRunner, table, column)}`);
}

async function sequenceOf(
  queryRunner: QueryRunner,
  table: string,
  column: string,
): Promise<string> {
  const [{ sequence }] = (await queryRunner.query(
    'SELECT pg_get_serial_sequence($1, $2) AS "sequence"',
    [quoted(queryRunner, table), column],
  )) as { sequence: string }[];
  return sequence;
}

/** EXECUTE on the function `signature` (`"name"(integer)`), which runs as its owner (runAsOwner). */
export const grantExecuteToRuntime = (queryRunner: QueryRunner, signature: string) =>
  grant(queryRunner, `EXECUTE ON FUNCTION ${signature}`);

export const revokeExecuteFromRuntime = (queryRunner: QueryRunner, signature: string) =>
  revoke(queryRunner, `EXECUTE ON FUNCTION ${signature}`);

/** USAGE on `schema` (the one the migrations run in), without which no table in it is reachable. */
export const grantSchemaUsageToRuntime = (queryRunner: QueryRunner, schema: string) =>
  grant(queryRunner, `USAGE ON SCHEMA ${quoted(queryRunner, schema)}`);

export const revokeSchemaUsageFromRuntime = (queryRunner: QueryRunner, schema: string) =>
  revoke(queryRunner, `USAGE ON SCHEMA ${quoted(queryRunner, schema)}`);

/** The schema the migrations run in (the service's tables are there). */
export async function currentSchema(queryRunner: QueryRunner): Promise<string> {
  const [{ schema }] = (await queryRunner.query('SELECT current_schema() AS "schema"')) as {
    schema: string;
  }[];
  return schema;
}

/**
 * Makes the trigger function `fn` run as its owner (the migration role), with a fixed
 * search_path, so that whoever fires the trigger (the runtime role) needs no privilege on what the
 * function writes, and cannot write it directly. A trigger function cannot be called directly
 * anyway; firing a trigger needs no EXECUTE. Any other function (`args`: its argument types)
 * runs only for the roles granted EXECUTE (grantExecuteToRuntime).
 */
export async function runAsOwner(queryRunner: QueryRunner, fn: string, args = ''): Promise<void> {
  const schema = await currentSchema(queryRunner);
  // pg_temp last: no temporary table of the caller's can stand in for the function's tables.
  await queryRunner.query(
    `ALTER FUNCTION "${fn}"(${args}) SECURITY DEFINER SET search_path = ${quoted(queryRunner, schema)}, pg_temp`,
  );
  await queryRunner.query(`REVOKE EXECUTE ON FUNCTION "${fn}"(${args}) FROM PUBLIC`);
}

/** Undoes runAsOwner. */
export async function runAsCaller(queryRunner: QueryRunner, fn: string): Promise<void> {
  await queryRunner.query(`GRANT EXECUTE ON FUNCTION "${fn}"() TO PUBLIC`);
  await queryRunner.query(`ALTER FUNCTION "${fn}"() SECURITY INVOKER RESET search_path`);
}
