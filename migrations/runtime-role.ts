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

/** USAGE on `schema` (the one the migrations run in), without which no table in it is reachable. */
export const grantSchemaUsageToRuntime = (queryRunner: QueryRunner, schema: string) =>
  grant(queryRunner, `USAGE ON SCHEMA ${quoted(queryRunner, schema)}`);

export const revokeSchemaUsageFromRuntime = (queryRunner: QueryRunner, schema: string) =>
  revoke(queryRunner, `USAGE ON SCHEMA ${quoted(queryRunner, schema)}`);
