import { type DataSource, type Migration, MigrationExecutor } from 'typeorm';

/**
 * The advisory lock key every migration run takes: 'users-service migrations' as an int8, so
 * it does not collide with another application's lock on a shared server.
 */
const MIGRATION_LOCK_KEY = '7571557218512740466';

/**
 * Applies the pending migrations as one transaction that first takes a transaction-level
 * advisory lock (pg_advisory_xact_lock: released by COMMIT or ROLLBACK, so it also works
 * through PgBouncer in transaction pooling, where a session lock could be left on a server
 * connection). The pending list is read after the lock is granted: of two processes starting
 * together (replicas with MIGRATE_ON_BOOT=true, or the Job beside one), the second waits and
 * then finds nothing to do, so each migration runs exactly once. Used by the service at boot
 * and by `npm run migration:run` (data-source.ts).
 */
export async function runMigrations(dataSource: DataSource): Promise<Migration[]> {
  const queryRunner = dataSource.createQueryRunner('master');
  try {
    await queryRunner.startTransaction();
    // A large migration may run longer than the service's per-query bound.
    await queryRunner.query('SET LOCAL statement_timeout = 0');
    await queryRunner.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    // With a transaction already open, the executor neither starts nor commits one; with 'all'
    // it refuses a migration that asks for a transaction mode of its own.
    const executor = new MigrationExecutor(dataSource, queryRunner);
    executor.transaction = 'all';
    const applied = await executor.executePendingMigrations();
    await queryRunner.commitTransaction();
    return applied;
  } catch (error) {
    if (queryRunner.isTransactionActive) await queryRunner.rollbackTransaction().catch(() => {});
    throw error;
  } finally {
    await queryRunner.release();
  }
}
