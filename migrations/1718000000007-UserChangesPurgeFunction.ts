import { MigrationInterface, QueryRunner } from 'typeorm';
import {
  grantExecuteToRuntime,
  grantToRuntime,
  revokeExecuteFromRuntime,
  revokeFromRuntime,
  runAsOwner,
} from './runtime-role.js';

const SIGNATURE = '"user_changes_purge"(integer, integer)';

/** 'users-service change purge' as an int8 (the first 8 bytes of its SHA-256). */
const PURGE_LOCK_KEY = '6904937353508933459';

/**
 * The change feed's retention purge becomes a function, `user_changes_purge(retention_hours,
 * batch_size)`, that runs as its owner (SECURITY DEFINER, a fixed search_path). The runtime role
 * keeps SELECT on the events and the watermark and may only call it: no bug or injection in the
 * service can delete an event out of order, nor lower the watermark so that an expired token
 * passes with a gap.
 *
 * One batch per call: the oldest events below the horizon, in feed order, as long as they are
 * expired, and the watermark moved to the last one deleted, in the caller's transaction. Only one
 * purger works at a time (a transaction-level advisory lock; a second one gives way and deletes
 * nothing): an event's `at` does not rise with its position, so two purgers judging two batches
 * at once could let the later batch, wholly expired, move the watermark past a younger event of
 * the earlier one that is kept.
 */
export class UserChangesPurgeFunction1718000000007 implements MigrationInterface {
  name = 'UserChangesPurgeFunction1718000000007';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION "user_changes_purge"(retention_hours integer, batch_size integer)
      RETURNS integer LANGUAGE plpgsql AS $$
      DECLARE
        deleted integer;
      BEGIN
        IF retention_hours IS NULL OR retention_hours < 1 OR batch_size IS NULL OR batch_size < 1 THEN
          RAISE EXCEPTION 'user_changes_purge: retention_hours and batch_size must be at least 1';
        END IF;
        IF NOT pg_try_advisory_xact_lock(${PURGE_LOCK_KEY}) THEN
          RETURN 0;
        END IF;
        WITH batch AS (
          SELECT "position", "id", "at" FROM "user_changes"
          WHERE "position" < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
          ORDER BY "position", "id" LIMIT batch_size
        ), expired AS (
          SELECT "position", "id" FROM (
            SELECT "position", "id",
              bool_and("at" < now() - make_interval(hours => retention_hours))
                OVER (ORDER BY "position", "id") AS "leading"
            FROM batch
          ) b WHERE "leading"
        ), gone AS (
          DELETE FROM "user_changes" c USING expired x
          WHERE (c."position", c."id") = (x."position", x."id") RETURNING c."position", c."id"
        ), moved AS (
          INSERT INTO "user_changes_watermark" AS w ("position", "id")
          SELECT "position", "id" FROM gone ORDER BY "position" DESC, "id" DESC LIMIT 1
          ON CONFLICT ("single_row") DO UPDATE
            SET "position" = excluded."position", "id" = excluded."id"
            WHERE (w."position", w."id") < (excluded."position", excluded."id")
        )
        SELECT count(*)::int INTO deleted FROM gone;
        RETURN deleted;
      END $$`);
    await runAsOwner(queryRunner, 'user_changes_purge', 'integer, integer');
    await grantExecuteToRuntime(queryRunner, SIGNATURE);
    await revokeFromRuntime(queryRunner, 'DELETE, UPDATE ("at")', 'user_changes');
    await revokeFromRuntime(queryRunner, 'INSERT, UPDATE', 'user_changes_watermark');
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await grantToRuntime(queryRunner, 'INSERT, UPDATE', 'user_changes_watermark');
    await grantToRuntime(queryRunner, 'DELETE, UPDATE ("at")', 'user_changes');
    await revokeExecuteFromRuntime(queryRunner, SIGNATURE);
    await queryRunner.query(`DROP FUNCTION ${SIGNATURE}`);
  }
}
