import { MigrationInterface, QueryRunner } from 'typeorm';

/** The `updated` event's CASE list ends with the role's CASE (1718000000005-UserChanges.ts). */
const LAST_TRACKED = `THEN 'role' END]`;

/** The user properties this migration adds to what an `updated` event can name. */
const TRACKED = [
  ['userName', 'user_name'],
  ['active', 'active'],
  ['externalId', 'external_id'],
  ['scimAttributes', 'scim_attributes'],
] as const;

const ADDED_CASES = TRACKED.map(
  ([property, column]) =>
    `, CASE WHEN NEW."${column}" IS DISTINCT FROM OLD."${column}" THEN '${property}' END`,
).join('');

/**
 * What SCIM provisioning (docs/provisioning.md) stores of a user beside the REST fields:
 * - `user_name`: unique ignoring case, never empty. Existing users get their email, else
 *   `user-<id>`; so does a user inserted without one (REST, gRPC, an operator's SQL), by a
 *   BEFORE INSERT trigger, because the id is only known once the row is being inserted.
 * - `active` (default true) and `external_id` (the provider's id; exact match, indexed).
 * - `scim_attributes`: the other declared SCIM attributes (names, phone numbers, addresses, the
 *   enterprise extension), one JSON object validated by the service against the SCIM schema.
 * The change feed names the new columns in `updated` events: its trigger function is the one
 * 1718000000005 wrote, with their CASEs appended.
 */
export class ScimUserColumns1718000000010 implements MigrationInterface {
  name = 'ScimUserColumns1718000000010';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "users"
        ADD "user_name" character varying(256) DEFAULT NULL,
        ADD "active" boolean NOT NULL DEFAULT true,
        ADD "external_id" character varying(256),
        ADD "scim_attributes" jsonb NOT NULL DEFAULT '{}'
          CONSTRAINT "users_scim_attributes_object" CHECK (jsonb_typeof("scim_attributes") = 'object')`);
    // The version and change-feed triggers skip this backfill: it is not a change of the users'
    // data, and a million events would flood every consumer.
    await queryRunner.query(`ALTER TABLE "users" DISABLE TRIGGER USER`);
    await queryRunner.query(
      `UPDATE "users" SET "user_name" = coalesce("email", 'user-' || "id") WHERE "user_name" IS NULL`,
    );
    await queryRunner.query(`ALTER TABLE "users" ENABLE TRIGGER USER`);
    await queryRunner.query(`ALTER TABLE "users" ALTER "user_name" SET NOT NULL`);
    await queryRunner.query(`
      CREATE FUNCTION "users_default_user_name"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW."user_name" IS NULL THEN
          NEW."user_name" := coalesce(NEW."email", 'user-' || NEW."id");
        END IF;
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER "users_default_user_name" BEFORE INSERT ON "users"
        FOR EACH ROW EXECUTE FUNCTION "users_default_user_name"()`);
    // ALWAYS: also under session_replication_role = replica (pg_restore --disable-triggers, a
    // logical replica's apply), where a row without a userName would break NOT NULL.
    await queryRunner.query(`ALTER TABLE "users" ENABLE ALWAYS TRIGGER "users_default_user_name"`);
    await queryRunner.query(
      `ALTER TABLE "users" ADD CONSTRAINT "users_user_name_not_empty" CHECK ("user_name" <> '')`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "users_user_name_lower_key" ON "users" (lower("user_name"))`,
    );
    await queryRunner.query(`CREATE INDEX "users_external_id_idx" ON "users" ("external_id")`);
    await this.rewriteChangesFunction(queryRunner, (body) => {
      if (!body.includes(LAST_TRACKED)) throw new Error('user_changes_record has changed shape');
      return body.replace(LAST_TRACKED, `THEN 'role' END${ADDED_CASES}]`);
    });
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await this.rewriteChangesFunction(queryRunner, (body) => body.replace(ADDED_CASES, ''));
    await queryRunner.query(`DROP INDEX "users_external_id_idx"`);
    await queryRunner.query(`DROP INDEX "users_user_name_lower_key"`);
    await queryRunner.query(`DROP TRIGGER "users_default_user_name" ON "users"`);
    await queryRunner.query(`DROP FUNCTION "users_default_user_name"()`);
    await queryRunner.query(`
      ALTER TABLE "users"
        DROP "scim_attributes", DROP "external_id", DROP "active", DROP "user_name"`);
  }

  /** Replaces user_changes_record with `edit` of its definition (owner and settings kept). */
  private async rewriteChangesFunction(
    queryRunner: QueryRunner,
    edit: (definition: string) => string,
  ): Promise<void> {
    const [{ definition }] = (await queryRunner.query(
      `SELECT pg_get_functiondef('"user_changes_record"'::regproc) AS "definition"`,
    )) as { definition: string }[];
    await queryRunner.query(edit(definition));
  }
}
