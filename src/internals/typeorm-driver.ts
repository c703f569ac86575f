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

/** What no longer holds of driverPool() on an initialised data source (empty when it all does). */
export function typeormDriverProblems(dataSource: DataSource): string[] {
  if (!dataSource.isInitialized) return [];
  return driverPool(dataSource) instanceof pg.Pool
    ? []
    : ['TypeORM postgres driver: driver.master is not the pg Pool it opened'];
}
