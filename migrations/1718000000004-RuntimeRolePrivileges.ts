import { MigrationInterface, QueryRunner } from 'typeorm';
import {
  currentSchema,
  grantSchemaUsageToRuntime,
  grantToRuntime,
  revokeFromRuntime,
  revokeSchemaUsageFromRuntime,
  runAsCaller,
  runAsOwner,
} from './runtime-role.js';

/**
 * What the service's runtime role may do, table by table: exactly what its statements need.
 * The migration role owns the schema; the runtime role gets no DDL, no TRUNCATE, no ownership
 * (deploy/sql/roles.sql, docs/deploying.md).
 *
 * - users: SELECT, INSERT, UPDATE, DELETE (reads, create, PUT/PATCH, DELETE).
 * - posts: SELECT, INSERT. A user's posts go with the user through the foreign key's
 *   ON DELETE CASCADE, which PostgreSQL runs as the table's owner.
 * - list_counts: SELECT (X-Total-Count). The counting triggers write it, not the service: their
 *   functions become SECURITY DEFINER (they run as their owner, the migration role) with a fixed
 *   search_path, so the runtime role cannot alter a total itself. Granting it INSERT, UPDATE and
 *   DELETE on the table instead would let a bug or an injection forge every list's total.
 * - idempotency_keys: SELECT, INSERT, DELETE (replay, store, purge), and UPDATE of one column
 *   only: the purge's FOR UPDATE SKIP LOCKED needs UPDATE on some column, and no statement of the
 *   service updates a key.
 * - migrations: SELECT (readiness waits until every migration of the build is applied).
 * - Sequences: none. The ids are identity columns, whose values an INSERT draws without any
 *   privilege on their sequences.
 */
export class RuntimeRolePrivileges1718000000004 implements MigrationInterface {
  name = 'RuntimeRolePrivileges1718000000004';

  private static readonly GRANTS: [table: string, privileges: string][] = [
    ['users', 'SELECT, INSERT, UPDATE, DELETE'],
    ['posts', 'SELECT, INSERT'],
    ['list_counts', 'SELECT'],
    ['idempotency_keys', 'SELECT, INSERT, DELETE, UPDATE ("created_at")'],
    ['migrations', 'SELECT'],
  ];

  /** The trigger functions that write list_counts for whoever fired them. */
  private static readonly COUNTING_FUNCTIONS = ['users_list_counts', 'posts_list_counts'];

  public async up(queryRunner: QueryRunner): Promise<void> {
    for (const fn of RuntimeRolePrivileges1718000000004.COUNTING_FUNCTIONS) {
      await runAsOwner(queryRunner, fn);
    }
    await grantSchemaUsageToRuntime(queryRunner, await currentSchema(queryRunner));
    for (const [table, privileges] of RuntimeRolePrivileges1718000000004.GRANTS) {
      await grantToRuntime(queryRunner, privileges, table);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const [table, privileges] of RuntimeRolePrivileges1718000000004.GRANTS) {
      await revokeFromRuntime(queryRunner, privileges, table);
    }
    await revokeSchemaUsageFromRuntime(queryRunner, await currentSchema(queryRunner));
    for (const fn of RuntimeRolePrivileges1718000000004.COUNTING_FUNCTIONS) {
      await runAsCaller(queryRunner, fn);
    }
  }
}
