import { MigrationInterface, QueryRunner } from 'typeorm';
import { currentSchema, grantExecuteToRuntime, revokeExecuteFromRuntime } from './runtime-role.js';

const IDS = '"user_group_ids"(integer)';
const NAMES = '"user_group_names"(integer)';

/**
 * A user's groups as two arrays in group id order, their ids and their display names, as a SCIM
 * User resource shows them (docs/provisioning.md). The service reads them in the statement of a
 * page of users, one call per user. PL/pgSQL keeps each function's plan for the session, where
 * the same subqueries written in each statement are planned anew every time (the service's
 * statements are unnamed, for PgBouncer's transaction pooling): a provider's look-up by userName
 * spent more time planning than executing. They run as their caller, on the runtime role's
 * SELECT of both tables, with the tables named in the migrations' schema.
 */
export class UserGroupFunctions1718000000013 implements MigrationInterface {
  name = 'UserGroupFunctions1718000000013';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const schema = `"${await currentSchema(queryRunner)}"`;
    await queryRunner.query(`
      CREATE FUNCTION "user_group_ids"("of_user" integer) RETURNS integer[]
      LANGUAGE plpgsql STABLE STRICT AS $$
      BEGIN
        RETURN ARRAY(
          SELECT m."group_id" FROM ${schema}."group_members" m
          WHERE m."user_id" = "of_user" ORDER BY m."group_id");
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION "user_group_names"("of_user" integer) RETURNS text[]
      LANGUAGE plpgsql STABLE STRICT AS $$
      BEGIN
        RETURN ARRAY(
          SELECT g."display_name" FROM ${schema}."group_members" m
          JOIN ${schema}."groups" g ON g."id" = m."group_id"
          WHERE m."user_id" = "of_user" ORDER BY m."group_id");
      END $$`);
    await grantExecuteToRuntime(queryRunner, IDS);
    await grantExecuteToRuntime(queryRunner, NAMES);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await revokeExecuteFromRuntime(queryRunner, NAMES);
    await revokeExecuteFromRuntime(queryRunner, IDS);
    await queryRunner.query(`DROP FUNCTION ${NAMES}`);
    await queryRunner.query(`DROP FUNCTION ${IDS}`);
  }
}
