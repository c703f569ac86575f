import { MigrationInterface, QueryRunner } from 'typeorm';
import { grantToRuntime, revokeFromRuntime } from './runtime-role.js';

/**
 * Groups, as identity providers provision them over SCIM (docs/provisioning.md):
 * - `groups`: id, displayName, the provider's externalId, and the version its ETag derives from,
 *   incremented by the same trigger function as the users' (1718000000003) on every change of the
 *   row. A change of the members touches `updated_at`, and so the version too.
 * - `group_members`: one row per user in a group; deleting the user or the group deletes it.
 */
export class ScimGroups1718000000011 implements MigrationInterface {
  name = 'ScimGroups1718000000011';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "groups" (
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        "version" integer NOT NULL DEFAULT 1,
        "id" integer GENERATED ALWAYS AS IDENTITY NOT NULL,
        "display_name" character varying(256) NOT NULL,
        "external_id" character varying(256),
        CONSTRAINT "PK_groups" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "groups_external_id_idx" ON "groups" ("external_id")`);
    await queryRunner.query(`CREATE INDEX "groups_display_name_idx" ON "groups" ("display_name")`);
    await queryRunner.query(`
      CREATE TRIGGER "groups_version" BEFORE UPDATE ON "groups"
        FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW)
        EXECUTE FUNCTION "row_version_increment"()`);
    await queryRunner.query(`
      CREATE TABLE "group_members" (
        "group_id" integer NOT NULL,
        "user_id" integer NOT NULL,
        CONSTRAINT "PK_group_members" PRIMARY KEY ("group_id", "user_id"),
        CONSTRAINT "FK_group_members_group" FOREIGN KEY ("group_id")
          REFERENCES "groups" ("id") ON DELETE CASCADE ON UPDATE NO ACTION,
        CONSTRAINT "FK_group_members_user" FOREIGN KEY ("user_id")
          REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
    await queryRunner.query(
      `CREATE INDEX "group_members_user_id_idx" ON "group_members" ("user_id")`,
    );
    await grantToRuntime(queryRunner, 'SELECT, INSERT, UPDATE, DELETE', 'groups');
    await grantToRuntime(queryRunner, 'SELECT, INSERT, DELETE', 'group_members');
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await revokeFromRuntime(queryRunner, 'SELECT, INSERT, DELETE', 'group_members');
    await revokeFromRuntime(queryRunner, 'SELECT, INSERT, UPDATE, DELETE', 'groups');
    await queryRunner.query(`DROP TABLE "group_members"`);
    await queryRunner.query(`DROP TABLE "groups"`);
  }
}
