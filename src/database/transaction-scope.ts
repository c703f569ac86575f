import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import type { ConnectionGate } from './connection-gate.js';
import { driverGate, PrimaryPool, type Queryable } from './queryable.js';

/**
 * The transaction a request runs in, found by repositories themselves: code called inside `run()`
 * (a service, its repository) joins the transaction without a `manager` parameter threaded through
 * it. Only keyed creates open one; every other statement runs alone on the primary's pool, and the
 * look-up costs one AsyncLocalStorage read.
 */
@Injectable()
export class TransactionScope {
  private readonly storage = new AsyncLocalStorage<QueryRunner>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly primary: PrimaryPool,
  ) {}

  /** The connection gate of the primary's pool (undefined before it connects). */
  get connectionGate(): ConnectionGate | undefined {
    return driverGate(this.dataSource);
  }

  /** The open transaction's manager, or undefined outside `run()`. */
  get manager(): EntityManager | undefined {
    return this.storage.getStore()?.manager;
  }

  /** Where a statement runs: in the open transaction, else straight on the primary's pool. */
  queryable(): Queryable {
    const runner = this.storage.getStore();
    if (!runner) return this.primary;
    return {
      query: <Row>(sql: string, parameters?: unknown[]) =>
        runner.query(sql, parameters) as Promise<Row[]>,
    };
  }

  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. The
   * connection is never handed back to the pool inside a transaction; when even the rollback
   * fails, the connection is gone and the original error is the one reported.
   */
  async run<T>(work: (runner: QueryRunner) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction();
      const result = await this.storage.run(runner, () => work(runner));
      await runner.commitTransaction();
      return result;
    } catch (error) {
      try {
        while (runner.isTransactionActive) await runner.rollbackTransaction();
      } catch {
        /* released below */
      }
      throw error;
    } finally {
      await runner.release();
    }
  }
}
