import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { driverPool, poolClientClass } from '../internals/typeorm-driver.js';
import type { DatabaseClientClass } from './database-client.js';
import type { ConnectionGate } from './connection-gate.js';
import { queryConfig, type Statement } from './statement.js';

/**
 * Anything that runs one SQL statement and returns its rows: the primary, a replica reader. A
 * statement that only reads is marked by its author (`reads(sql)`, statement.ts); any other
 * statement sent outside a transaction is treated as one that commits.
 */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: Statement, parameters?: unknown[]): Promise<Row[]>;
}

/** The connection gate of the primary's pool (undefined before it connects). */
export function driverGate(dataSource: DataSource): ConnectionGate | undefined {
  const pool = driverPool(dataSource);
  return pool && (poolClientClass(pool) as Partial<DatabaseClientClass> | undefined)?.gate;
}

/**
 * Reads on the primary outside any transaction, straight on the pool that TypeORM's driver opened
 * (the same connections, statement timeout and error codes): a user or post by id, list pages
 * and totals. A TypeORM query runner, created, connected, released and its query events
 * broadcast for every statement, cost more per read than the statement itself. Writes run in a
 * transaction (TransactionScope), never here.
 */
@Injectable()
export class PrimaryPool implements Queryable {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async query<Row = Record<string, unknown>>(
    sql: Statement,
    parameters?: unknown[],
  ): Promise<Row[]> {
    const pool = driverPool(this.dataSource);
    if (!pool) throw new Error('the database connection is not initialised');
    // Not pool.query(): it answers a query whose connection broke with the connection's own error,
    // ahead of the client's verdict (a write's CommitOutcomeUnknownError, databaseClient).
    const client = await pool.connect();
    let failed: Error | undefined;
    try {
      return (await client.query(queryConfig(sql, parameters))).rows as Row[];
    } catch (error) {
      failed = error as Error;
      throw error;
    } finally {
      // Like pool.query(): a connection whose statement failed is closed, not pooled.
      client.release(failed);
    }
  }
}
