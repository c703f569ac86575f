import { MigrationInterface, QueryRunner } from 'typeorm';
import { currentSchema, grantExecuteToRuntime, revokeExecuteFromRuntime } from './runtime-role.js';

const GROUPS = '"user_groups"(integer)';
const BY_USER_NAME = '"users_with_user_name"(text)';
const BY_EXTERNAL_ID = '"users_with_external_id"(text)';

/**
 * The statements of a provider's look-up, as functions whose plans PL/pgSQL keeps for the session
 * (the service's own statements are unnamed, for PgBouncer's transaction pooling, and planned on
 * every call; docs/provisioning.md):
 *
 * - `users_with_user_name(text)` and `users_with_external_id(text)`: the users a SCIM filter
 *   `userName eq "…"` (case-insensitive, by the unique index on lower(user_name)) or
 *   `externalId eq "…"` (case-exact, by its index) names. Providers send one of these before
 *   each create. `ROWS 1` is the planner's estimate for the statement that reads them; the
 *   positional `$1` keeps each body's text the statement the filter compiler would send.
 * - `user_groups(integer)`: a user's groups as one two-dimensional text array of
 *   `{group id, display name}` pairs in group id order: one call per user where the release
 *   before made two. The two functions of the migration before this one stay: the release still
 *   serving while this migration runs calls them (docs/development.md, "Writing a migration").
 *
 * They run as their caller, on the runtime role's SELECT of the tables, named in the
 * migrations' schema. The look-ups return the users table's row type: a migration that recreates
 * that table drops and recreates them too. A later release's migration drops `user_group_ids` and
 * `user_group_names`, once no release that calls them serves.
 */
export class ScimLookupFunctions1718000000014 implements MigrationInterface {
  name = 'ScimLookupFunctions1718000000014';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const schema = `"${await currentSchema(queryRunner)}"`;
    await queryRunner.query(`
      CREATE FUNCTION "user_groups"("of_user" integer) RETURNS text[]
      LANGUAGE plpgsql STABLE STRICT AS $$
      BEGIN
        RETURN ARRAY(
          SELECT ARRAY[m."group_id"::text, g."display_name"] FROM ${schema}."group_members" m
          JOIN ${schema}."groups" g ON g."id" = m."group_id"
          WHERE m."user_id" = "of_user" ORDER BY m."group_id");
      END $$`);
    const lookups: [string, string][] = [
      [BY_USER_NAME, `lower("users"."user_name") = lower($1)`],
      [BY_EXTERNAL_ID, `"users"."external_id" = $1`],
    ];
    for (const [signature, condition] of lookups) {
      await queryRunner.query(`
        CREATE FUNCTION ${signature} RETURNS SETOF ${schema}."users"
        LANGUAGE plpgsql STABLE STRICT ROWS 1 AS $$
        BEGIN
          RETURN QUERY SELECT * FROM ${schema}."users" WHERE ${condition};
        END $$`);
    }
    for (const signature of [GROUPS, BY_USER_NAME, BY_EXTERNAL_ID]) {
      await grantExecuteToRuntime(queryRunner, signature);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const signature of [BY_EXTERNAL_ID, BY_USER_NAME, GROUPS]) {
      await revokeExecuteFromRuntime(queryRunner, signature);
      await queryRunner.query(`DROP FUNCTION ${signature}`);
    }
  }
}
