import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The users counters of `list_counts` in 64 slots instead of 16 (only the trigger function
 * changes; the rows already there stay valid, a list's total being the sum of its slots).
 *
 * The slot is the writing backend's pid modulo the slot count, and a slot's row stays locked from
 * the writer's statement to its commit. With 16 slots the ten connections of one pool already
 * shared slots (and the pools of several replicas share them all), so writers queued on each
 * other's row locks. In one run with PostgreSQL as the bottleneck (`npm run bench -- --scale
 * --pin`) the trigger took 97 µs per create with 16 slots and 63 µs with 64 (bench/README.md,
 * "Scale"). A list's total then sums at most 64 rows, an index range scan. The rows are still
 * written in key order, so concurrent statements cannot deadlock.
 */
export class ListCountsSlots1718000000004 implements MigrationInterface {
  name = 'ListCountsSlots1718000000004';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(usersListCounts(64));
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(usersListCounts(16));
  }
}

/** users_list_counts() as migration 1718000000002 wrote it, with `slots` user slots. */
function usersListCounts(slots: number): string {
  const upsert = (deltas: string) => `
    INSERT INTO "list_counts" AS c ("list", "slot", "n")
    SELECT d."list", pg_backend_pid() % ${slots}, sum(d."delta") FROM (${deltas}) d
    GROUP BY d."list" HAVING sum(d."delta") <> 0 ORDER BY d."list"
    ON CONFLICT ("list", "slot") DO UPDATE SET "n" = c."n" + excluded."n";`;
  return `
    CREATE OR REPLACE FUNCTION "users_list_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN ${upsert(
        `SELECT 'users' AS "list", 1 AS "delta" FROM "new_rows"
         UNION ALL SELECT 'users.role:' || "role", 1 FROM "new_rows"`,
      )}
      ELSIF TG_OP = 'DELETE' THEN ${upsert(
        `SELECT 'users' AS "list", -1 AS "delta" FROM "old_rows"
         UNION ALL SELECT 'users.role:' || "role", -1 FROM "old_rows"`,
      )}
      ELSE ${upsert(
        `SELECT 'users.role:' || "role" AS "list", -1 AS "delta" FROM "old_rows"
         UNION ALL SELECT 'users.role:' || "role", 1 FROM "new_rows"`,
      )}
      END IF;
      RETURN NULL;
    END $$`;
}
