import pg from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The pg Pool that TypeORM's postgres driver opened on the data source's URL (`driver.master`,
 * not public API), or undefined before the data source connects. The service's hot paths and
 * transactions use it directly: the same connections, settings and Client class as TypeORM.
 */
export function driverPool(dataSource: DataSource): pg.Pool | undefined {
  return (dataSource.driver as unknown as { master?: pg.Pool }).master;
}

/**
 * The Client class a pg Pool opens its connections with (`options.Client`, pg-pool's copy of
 * its settings, not public API): the service's own (databaseClient), which carries the pool's
 * connection gate.
 */
export function poolClientClass(pool: pg.Pool): unknown {
  return (pool as unknown as { options?: { Client?: unknown } }).options?.Client;
}

/**
 * What no longer holds of driverPool() and poolClientClass() on an initialised data source
 * (empty when it all does).
 */
export function typeormDriverProblems(dataSource: DataSource): string[] {
  if (!dataSource.isInitialized) return [];
  const pool = driverPool(dataSource);
  if (!(pool instanceof pg.Pool)) {
    return ['TypeORM postgres driver: driver.master is not the pg Pool it opened'];
  }
  return typeof poolClientClass(pool) === 'function'
    ? []
    : ['pg Pool: options.Client is not the Client class it opens connections with'];
}
