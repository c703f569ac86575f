import { MigrationInterface, QueryRunner } from 'typeorm';
import { runAsOwner } from './runtime-role.js';

const MAX_BIGINT = '9223372036854775807';

const TRACKED = ['name', 'email', 'role'] as const;

/** The least position a new event may take; the reset raises it above its own mark. */
const floorFunction = (value: string) =>
  `CREATE OR REPLACE FUNCTION "user_changes_floor"() RETURNS bigint
     LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT ${value}::bigint'`;

/** The record trigger's function; with `floored`, no event takes a position below the floor. */
function recordFunction(floored: boolean): string {
  const columns = `"position", "user_id", "version", "type", "changed", "at", "xid"`;
  const changed = TRACKED.map(
    (column) => `CASE WHEN NEW."${column}" IS DISTINCT FROM OLD."${column}" THEN '${column}' END`,
  ).join(', ');
  const floor = floored ? ', "user_changes_floor"()' : '';
  return `
    CREATE OR REPLACE FUNCTION "user_changes_record"() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      own bigint := pg_current_xact_id()::text::bigint;
      previous bigint;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO "user_changes" (${columns})
        VALUES (greatest(own${floor}), NEW."id", NEW."version", 'created',
                '{${TRACKED.join(',')}}', now(), own);
        RETURN NULL;
      END IF;
      SELECT c."position" INTO previous FROM "user_changes" c
        WHERE c."user_id" = OLD."id" AND c."version" = OLD."version";
      IF TG_OP = 'UPDATE' THEN
        INSERT INTO "user_changes" (${columns})
        VALUES (greatest(own, previous${floor}), NEW."id", NEW."version", 'updated',
                array_remove(ARRAY[${changed}]::text[], NULL), now(), own);
      ELSE
        INSERT INTO "user_changes" (${columns})
        VALUES (greatest(own, previous${floor}), OLD."id", OLD."version" + 1, 'deleted', '{}', now(), own);
      END IF;
      RETURN NULL;
    END $$`;
}

/** The TRUNCATE trigger's function: the new one truncates the events and raises the floor. */
function resetFunction(floored: boolean): string {
  const clear = floored
    ? `BEGIN
         TRUNCATE "user_changes";
       EXCEPTION WHEN object_in_use THEN
         DELETE FROM "user_changes";
       END;`
    : `DELETE FROM "user_changes";`;
  const raise = floored ? `EXECUTE format(${quote(floorFunction('%s'))}, own + 1);` : '';
  return `
    CREATE OR REPLACE FUNCTION "user_changes_reset"() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      own bigint := pg_current_xact_id()::text::bigint;
    BEGIN
      ${clear}
      INSERT INTO "user_changes_watermark" ("position", "id") VALUES (own, ${MAX_BIGINT})
      ON CONFLICT ("single_row") DO UPDATE SET "position" = excluded."position", "id" = excluded."id";
      ${raise}
      RETURN NULL;
    END $$`;
}

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * `TRUNCATE users` resets the feed (docs/events.md): every token issued before it expires, as the
 * watermark moves to (the truncating transaction's id, the largest event id). A transaction with
 * a smaller id that writes after the truncate commits, or the truncating transaction itself, used
 * to write its events below that mark, where no reader looks. The reset now also raises a floor,
 * one above its own id, below which the record trigger writes no event. The floor is a constant
 * in an IMMUTABLE function that the reset redefines: the trigger's plans fold it and are replanned
 * when it changes, so a change costs a comparison, not a read of the watermark.
 *
 * The reset clears the events with TRUNCATE (a DELETE of every row is slow on a large feed and
 * leaves them to vacuum); a `TRUNCATE users, user_changes` still has the table open, and deletes.
 */
export class UserChangesResetFloor1718000000006 implements MigrationInterface {
  name = 'UserChangesResetFloor1718000000006';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // A reset that ran before this migration keeps its mark: the floor starts above it.
    const [{ floor }] = (await queryRunner.query(
      `SELECT coalesce((SELECT "position" + 1 FROM "user_changes_watermark" WHERE "id" = ${MAX_BIGINT}), 0)::text AS "floor"`,
    )) as { floor: string }[];
    await queryRunner.query(floorFunction(floor));
    await queryRunner.query(recordFunction(true));
    await queryRunner.query(resetFunction(true));
    // CREATE OR REPLACE resets SECURITY DEFINER; the reset now also redefines the floor, which
    // only the owner may.
    await runAsOwner(queryRunner, 'user_changes_record');
    await runAsOwner(queryRunner, 'user_changes_reset');
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(resetFunction(false));
    await queryRunner.query(recordFunction(false));
    await runAsOwner(queryRunner, 'user_changes_record');
    await queryRunner.query(`DROP FUNCTION "user_changes_floor"()`);
  }
}
