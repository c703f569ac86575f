import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { driverPool } from '../internals/typeorm-driver.js';
import type { DatabaseClientClass } from './database-client.js';
import type { ConnectionGate } from './connection-gate.js';

/** Anything that runs one SQL statement and returns its rows: the primary, a replica reader. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, parameters?: unknown[]): Promise<Row[]>;
}

/** The connection gate of the primary's pool (undefined before it connects). */
export function driverGate(dataSource: DataSource): ConnectionGate | undefined {
  const options = (
    driverPool(dataSource) as { options?: { Client?: Partial<DatabaseClientClass> } }
  )?.options;
  return options?.Client?.gate;
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

  async query<Row = Record<string, unknown>>(sql: string, parameters?: unknown[]): Promise<Row[]> {
    const pool = driverPool(this.dataSource);
    if (!pool) throw new Error('the database connection is not initialised');
    return (await pool.query(sql, parameters)).rows as Row[];
  }
}
