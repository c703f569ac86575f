import { MigrationInterface, QueryRunner } from 'typeorm';
import {
  grantSequenceReadToRuntime,
  grantToRuntime,
  revokeFromRuntime,
  revokeSequenceReadFromRuntime,
  runAsOwner,
} from './runtime-role.js';

/** The largest event id: a watermark at it expires every token of its position. */
const MAX_BIGINT = '9223372036854775807';

/** The user properties an `updated` event can name, with their columns (docs/events.md). */
const TRACKED = [
  ['name', 'name'],
  ['email', 'email'],
  ['role', 'role'],
] as const;

/**
 * The change feed of users (docs/events.md): `user_changes`, one row per change of a user,
 * written by row triggers on `users` in the transaction of the change, whoever makes it (the
 * service, a migration, an operator's SQL), and the purge's watermark.
 *
 * Each event's `position` is the writer's transaction id, or the position of the user's previous
 * event when that is greater. A writer that changes a user another transaction changed has waited
 * for that transaction's commit on the row lock, so the previous event is visible to the trigger's
 * own statement (a new snapshot per statement in a volatile plpgsql function under READ COMMITTED;
 * under REPEATABLE READ the write would have failed instead). Positions therefore never decrease
 * along one user's versions, even when the later writer's transaction id is the smaller one, and
 * `id`, taken from the identity after that commit, breaks the tie. The identity must keep CACHE 1
 * (its default): with a per-session cache, ids would no longer follow the order they were taken.
 *
 * A reader returns only events whose position is below the xmin of its snapshot (every
 * transaction below it has ended), in (position, id) order, so a transaction that commits late
 * is delivered after its commit and never passed over.
 */
export class UserChanges1718000000005 implements MigrationInterface {
  name = 'UserChanges1718000000005';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TYPE "user_change_type" AS ENUM ('created', 'updated', 'deleted')`,
    );
    // No foreign key to users: a deletion's tombstone outlives the user.
    await queryRunner.query(`
      CREATE TABLE "user_changes" (
        "position" bigint NOT NULL,
        "id" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
        "user_id" integer NOT NULL,
        "version" integer NOT NULL,
        "type" "user_change_type" NOT NULL,
        "changed" text array NOT NULL,
        "at" TIMESTAMP(3) WITH TIME ZONE NOT NULL,
        "xid" bigint NOT NULL,
        CONSTRAINT "PK_user_changes" PRIMARY KEY ("position", "id")
      )`);
    // The previous event of a user (the trigger's look-up), and one event per user and version.
    await queryRunner.query(
      `CREATE UNIQUE INDEX "user_changes_user_id_version_key" ON "user_changes" ("user_id", "version")`,
    );
    await queryRunner.query(`
      CREATE TABLE "user_changes_watermark" (
        "single_row" boolean NOT NULL DEFAULT true,
        "position" bigint NOT NULL,
        "id" bigint NOT NULL,
        CONSTRAINT "user_changes_watermark_single_row" CHECK ("single_row"),
        CONSTRAINT "PK_user_changes_watermark" PRIMARY KEY ("single_row")
      )`);

    const columns = `"position", "user_id", "version", "type", "changed", "at", "xid"`;
    const changed = TRACKED.map(
      ([property, column]) =>
        `CASE WHEN NEW."${column}" IS DISTINCT FROM OLD."${column}" THEN '${property}' END`,
    ).join(', ');
    // xid8 as bigint: see src/changes/user-change.entity.ts. The look-up of the previous event
    // finds nothing for a user older than the feed, or whose last event was purged: a purged
    // event lay below every running transaction's id, so the writer's own id is the greater.
    await queryRunner.query(`
      CREATE FUNCTION "user_changes_record"() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        own bigint := pg_current_xact_id()::text::bigint;
        previous bigint;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO "user_changes" (${columns})
          VALUES (own, NEW."id", NEW."version", 'created',
                  '{${TRACKED.map(([property]) => property).join(',')}}', now(), own);
          RETURN NULL;
        END IF;
        SELECT c."position" INTO previous FROM "user_changes" c
          WHERE c."user_id" = OLD."id" AND c."version" = OLD."version";
        IF TG_OP = 'UPDATE' THEN
          INSERT INTO "user_changes" (${columns})
          VALUES (greatest(own, previous), NEW."id", NEW."version", 'updated',
                  array_remove(ARRAY[${changed}]::text[], NULL), now(), own);
        ELSE
          INSERT INTO "user_changes" (${columns})
          VALUES (greatest(own, previous), OLD."id", OLD."version" + 1, 'deleted', '{}', now(), own);
        END IF;
        RETURN NULL;
      END $$`);
    // Three triggers, because only a single-event trigger's WHEN may read OLD and NEW. An UPDATE
    // that changes nothing is skipped, as the version trigger skips it (the version stays).
    await queryRunner.query(`
      CREATE TRIGGER "users_changes_insert" AFTER INSERT ON "users"
        FOR EACH ROW EXECUTE FUNCTION "user_changes_record"()`);
    await queryRunner.query(`
      CREATE TRIGGER "users_changes_update" AFTER UPDATE ON "users"
        FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW) EXECUTE FUNCTION "user_changes_record"()`);
    await queryRunner.query(`
      CREATE TRIGGER "users_changes_delete" AFTER DELETE ON "users"
        FOR EACH ROW EXECUTE FUNCTION "user_changes_record"()`);
    // TRUNCATE fires no row trigger: the users are all gone at once, and their ids may start
    // again from 1 (RESTART IDENTITY), which would make new users' events pass for old ones. The
    // feed starts again with them: its events go, and every token issued before is expired (410),
    // so each consumer lists the users again and follows from there.
    await queryRunner.query(`
      CREATE FUNCTION "user_changes_reset"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM "user_changes";
        INSERT INTO "user_changes_watermark" ("position", "id")
        VALUES (pg_current_xact_id()::text::bigint, ${MAX_BIGINT})
        ON CONFLICT ("single_row") DO UPDATE SET "position" = excluded."position", "id" = excluded."id";
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER "users_changes_truncate" AFTER TRUNCATE ON "users"
        FOR EACH STATEMENT EXECUTE FUNCTION "user_changes_reset"()`);
    // The service's runtime role reads the feed and purges it; only the trigger, running as the
    // migration role, writes events, so no bug or injection can forge one. The purge's FOR UPDATE
    // SKIP LOCKED needs UPDATE on some column; no statement of the service updates an event.
    await runAsOwner(queryRunner, 'user_changes_record');
    await grantToRuntime(queryRunner, 'SELECT, DELETE, UPDATE ("at")', 'user_changes');
    await grantToRuntime(queryRunner, 'SELECT, INSERT, UPDATE', 'user_changes_watermark');
    // The metric of events written reads where the identity stands.
    await grantSequenceReadToRuntime(queryRunner, 'user_changes', 'id');
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await revokeSequenceReadFromRuntime(queryRunner, 'user_changes', 'id');
    await revokeFromRuntime(queryRunner, 'SELECT, INSERT, UPDATE', 'user_changes_watermark');
    await revokeFromRuntime(queryRunner, 'SELECT, DELETE, UPDATE ("at")', 'user_changes');
    for (const event of ['insert', 'update', 'delete', 'truncate']) {
      await queryRunner.query(`DROP TRIGGER "users_changes_${event}" ON "users"`);
    }
    await queryRunner.query(`DROP FUNCTION "user_changes_reset"()`);
    await queryRunner.query(`DROP FUNCTION "user_changes_record"()`);
    await queryRunner.query(`DROP TABLE "user_changes_watermark"`);
    await queryRunner.query(`DROP TABLE "user_changes"`);
    await queryRunner.query(`DROP TYPE "user_change_type"`);
  }
}
