import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isDatabaseUnavailable } from '../database/database-errors.js';

/**
 * Whether the database's schema has caught up with this build: every migration the build knows
 * (database-options.ts) is recorded in the migrations table. Until it is, the instance is not
 * ready (HealthService): with MIGRATE_ON_BOOT=false the migration Job may still be running, and
 * a request could meet a column or table that is not there yet.
 *
 * Checked by each health check until it first holds, then never again: a later release applying
 * newer migrations (names this build does not know, which are fine) must not take older pods
 * out, and the database's schema never goes back while this build serves.
 */
@Injectable()
export class SchemaReadiness {
  private readonly logger = new Logger('Health');
  private readonly expected: readonly string[];
  private readonly sql: string;
  private upToDate = false;
  private lastError?: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.expected = dataSource.migrations.map((migration) => migration.name ?? '');
    const table = dataSource.options.migrationsTableName ?? 'migrations';
    this.sql = `SELECT "name" FROM ${dataSource.driver.escape(table)} WHERE "name" = ANY($1)`;
  }

  /** True once every migration of this build has been seen applied. */
  get current(): boolean {
    return this.upToDate;
  }

  /**
   * Reads the migrations table, until it is up to date. An unreachable database is the caller's
   * to handle (the health check's answer); any other failure (no migrations table yet) counts as
   * behind.
   */
  async refresh(): Promise<boolean> {
    if (this.upToDate) return true;
    try {
      const rows: { name: string }[] = await this.dataSource.query(this.sql, [this.expected]);
      const applied = new Set(rows.map((row) => row.name));
      this.upToDate = this.expected.every((name) => applied.has(name));
      if (this.upToDate) this.logger.log('database schema is up to date with this build');
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error;
      // Logged once per kind of failure, not once a second.
      const code = (error as { code?: string }).code ?? 'unknown';
      if (code !== this.lastError) {
        this.logger.warn({ err: error, msg: 'cannot read which migrations are applied' });
        this.lastError = code;
      }
    }
    return this.upToDate;
  }
}
