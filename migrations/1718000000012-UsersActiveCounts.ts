import { MigrationInterface, QueryRunner } from 'typeorm';
import { runAsOwner } from './runtime-role.js';

/** The slots of a user list's count (1718000000002-ListCountsAndKeysetIndexes.ts). */
const SLOTS = 16;

/** The keys one user row counts under: every user, its role, and with `active` its status too. */
function keysOf(rows: string, delta: 1 | -1, active: boolean): string {
  const keys = [`'users.role:' || "role"`];
  if (active) {
    keys.push(`'users.active:' || "active"`, `'users.role:' || "role" || '.active:' || "active"`);
  }
  return keys
    .map((key) => `SELECT ${key} AS "list", ${delta} AS "delta" FROM "${rows}"`)
    .join(' UNION ALL ');
}

/** The counting trigger function of users, counting by `active` too or not. */
function usersListCounts(active: boolean): string {
  const upsert = (deltas: string) => `
      INSERT INTO "list_counts" AS c ("list", "slot", "n")
      SELECT d."list", pg_backend_pid() % ${SLOTS}, sum(d."delta") FROM (${deltas}) d
      GROUP BY d."list" HAVING sum(d."delta") <> 0 ORDER BY d."list"
      ON CONFLICT ("list", "slot") DO UPDATE SET "n" = c."n" + excluded."n";`;
  return `
    CREATE OR REPLACE FUNCTION "users_list_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN ${upsert(
        `SELECT 'users' AS "list", 1 AS "delta" FROM "new_rows" UNION ALL ${keysOf('new_rows', 1, active)}`,
      )}
      ELSIF TG_OP = 'DELETE' THEN ${upsert(
        `SELECT 'users' AS "list", -1 AS "delta" FROM "old_rows" UNION ALL ${keysOf('old_rows', -1, active)}`,
      )}
      ELSE ${upsert(`${keysOf('old_rows', -1, active)} UNION ALL ${keysOf('new_rows', 1, active)}`)}
      END IF;
      RETURN NULL;
    END $$`;
}

/** Counts again from the rows (operators run it after writes that skipped triggers). */
function listCountsRebuild(active: boolean): string {
  const byActive = active
    ? `
      UNION ALL SELECT 'users.active:' || "active", 0, count(*) FROM "users" GROUP BY "active"
      UNION ALL SELECT 'users.role:' || "role" || '.active:' || "active", 0, count(*)
        FROM "users" GROUP BY "role", "active"`
    : '';
  return `
    CREATE OR REPLACE FUNCTION "list_counts_rebuild"() RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      LOCK TABLE "users", "posts" IN SHARE ROW EXCLUSIVE MODE;
      DELETE FROM "list_counts";
      INSERT INTO "list_counts" ("list", "slot", "n")
      SELECT 'users', 0, count(*) FROM "users"
      UNION ALL SELECT 'users.role:' || "role", 0, count(*) FROM "users" GROUP BY "role"${byActive}
      UNION ALL SELECT 'posts.user:' || "user_id", 0, count(*) FROM "posts" GROUP BY "user_id";
    END $$`;
}

/**
 * Totals of `GET /users?active=` in O(1), like the other list totals: the counting trigger of
 * users keeps `users.active:<true|false>` and `users.role:<role>.active:<true|false>` beside
 * `users` and `users.role:<role>` (src/lists/list-counts.ts), and the rebuild counts them too.
 * CREATE OR REPLACE resets a function's settings: the trigger function runs as its owner again.
 */
export class UsersActiveCounts1718000000012 implements MigrationInterface {
  name = 'UsersActiveCounts1718000000012';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await this.rewrite(queryRunner, true);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await this.rewrite(queryRunner, false);
  }

  private async rewrite(queryRunner: QueryRunner, active: boolean): Promise<void> {
    await queryRunner.query(usersListCounts(active));
    await runAsOwner(queryRunner, 'users_list_counts');
    await queryRunner.query(listCountsRebuild(active));
    await queryRunner.query(`SELECT "list_counts_rebuild"()`);
  }
}
