import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Conditional requests and idempotent creates.
 *
 * 1. `version` on users and posts: the ETag's source. A trigger increments it on every update
 *    that changes the row, whoever makes it, in the same statement; a no-op update keeps it.
 *    Adding a column with a constant default rewrites no rows.
 * 2. `idempotency_keys`: the outcome of each keyed create (status, headers, body) with a
 *    fingerprint of the request, written in the transaction that creates the resource.
 */
export class VersionsAndIdempotencyKeys1718000000003 implements MigrationInterface {
  name = 'VersionsAndIdempotencyKeys1718000000003';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION "row_version_increment"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW."version" := OLD."version" + 1;
        RETURN NEW;
      END $$`);
    for (const table of ['users', 'posts']) {
      await queryRunner.query(`ALTER TABLE "${table}" ADD "version" integer NOT NULL DEFAULT 1`);
      await queryRunner.query(`
        CREATE TRIGGER "${table}_version" BEFORE UPDATE ON "${table}"
          FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW)
          EXECUTE FUNCTION "row_version_increment"()`);
    }

    await queryRunner.query(`
      CREATE TABLE "idempotency_keys" (
        "key" character varying(255) NOT NULL,
        "fingerprint" character(64) NOT NULL,
        "status" smallint,
        "headers" jsonb NOT NULL DEFAULT '{}',
        "body" jsonb,
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_idempotency_keys" PRIMARY KEY ("key")
      )`);
    await queryRunner.query(
      `CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys" ("created_at")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "idempotency_keys"`);
    for (const table of ['users', 'posts']) {
      await queryRunner.query(`DROP TRIGGER "${table}_version" ON "${table}"`);
      await queryRunner.query(`ALTER TABLE "${table}" DROP COLUMN "version"`);
    }
    await queryRunner.query(`DROP FUNCTION "row_version_increment"()`);
  }
}
