import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { inOneWrite, setPipeline } from '../internals/pg-client.js';
import { driverPool } from '../internals/typeorm-driver.js';
import type { ConnectionGate } from './connection-gate.js';
import { driverGate, PrimaryPool, type Queryable } from './queryable.js';
import { queryConfig, type Statement } from './statement.js';

type Row = Record<string, unknown>;

/**
 * The open transaction: one connection of the primary's pool, used through pg directly (a TypeORM
 * query runner costs more per statement than the statement: bench/README.md, "Profile-driven
 * changes") and in pg's pipeline mode, so that statements written together cost one round trip.
 * Each round trip costs the service a socket write and a read or two, more than the statements'
 * own work: a keyed create takes two (see IdempotencyInterceptor).
 *
 * The connection is taken from the pool with the first statement, not before: work that fails
 * before it reaches the database (a request body refused by validation) holds no connection, so
 * it answers as it would without a transaction even when the pool is exhausted. BEGIN is not sent
 * on its own: it goes out with the first statement of the work, in the same network write, and
 * that statement waits behind it on the server. The last statements go out with the COMMIT
 * (`commit()`).
 */
export class Transaction implements Queryable {
  private client: pg.PoolClient | undefined;
  private connecting: Promise<pg.PoolClient> | undefined;
  private begun: Promise<{ error: unknown } | undefined> | undefined;
  private ended = false;

  constructor(private readonly pool: pg.Pool) {}

  async query<R = Row>(sql: Statement, parameters?: unknown[]): Promise<R[]> {
    const client = await this.connection();
    const config = queryConfig(sql, parameters);
    const result = this.isBegun
      ? client.query(config)
      : inOneWrite(client, () => {
          this.begin(client);
          return client.query(config);
        });
    return (await result).rows as R[];
  }

  /**
   * Sends `statements` (without parameters) and COMMIT as one message and ends the transaction:
   * it commits only if every statement succeeded (the first that fails stops the rest, COMMIT
   * included, and its error is thrown). A COMMIT whose answer is lost fails with
   * CommitOutcomeUnknownError (cancellingClient): it may have committed.
   */
  commit(...statements: string[]): Promise<void> {
    if (!this.isBegun && statements.length === 0) {
      // Nothing was sent and nothing is to be: no connection, no round trip.
      this.ended = true;
      return Promise.resolve();
    }
    return this.end([...statements, 'COMMIT']);
  }

  /**
   * Undoes everything the transaction did, then runs `statements` (without parameters) in a new
   * one and commits them: ROLLBACK, BEGIN, the statements and COMMIT as one message, so one round
   * trip. As with commit(), the first statement that fails stops the rest and is thrown.
   */
  undoAndCommit(...statements: string[]): Promise<void> {
    return this.end(['ROLLBACK', 'BEGIN', ...statements, 'COMMIT']);
  }

  /** Whether BEGIN has been sent (it goes with the first statement). */
  get isBegun(): boolean {
    return this.begun !== undefined;
  }

  /** Whether commit() or undoAndCommit() ended the transaction. */
  get isEnded(): boolean {
    return this.ended;
  }

  /** The connection this transaction holds, taken from the pool (in pipeline mode) on first use. */
  private connection(): Promise<pg.PoolClient> {
    this.connecting ??= this.pool.connect().then((client) => {
      this.client = client;
      setPipeline(client, true);
      return client;
    });
    return this.connecting;
  }

  /**
   * Gives the connection back to the pool, if one was taken: once nothing is pending on it, or
   * `destroy` to close it instead (the transaction's state on the server is unknown).
   */
  release(destroy: boolean): void {
    if (!this.client) {
      // A connection still being taken when the work gave up goes straight back, closed.
      this.connecting?.then((client) => client.release(true)).catch(() => {});
      this.connecting = undefined;
      return;
    }
    if (!destroy) setPipeline(this.client, false);
    this.client.release(destroy);
    this.client = undefined;
    this.connecting = undefined;
  }

  /** Rolls back, queued behind anything still in flight; false when the connection failed. */
  async rollback(): Promise<boolean> {
    if (!this.client || !this.isBegun) return true;
    // Not needed once a COMMIT was answered: the transaction is over (committed or not).
    if (this.ended && this.client.getTransactionStatus() === 'I') return true;
    return this.client.query('ROLLBACK').then(
      () => true,
      () => false,
    );
  }

  /** Queues BEGIN. */
  private begin(client: pg.PoolClient): void {
    // Settled here, so that its error is never an unhandled rejection; end() reports it.
    this.begun = client.query('BEGIN').then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
  }

  private async end(statements: string[]): Promise<void> {
    if (this.isBegun) {
      const failed = await this.begun;
      if (failed) throw failed.error;
    } else {
      // No statement carried BEGIN: it opens this message.
      this.begun = Promise.resolve(undefined);
      statements = ['BEGIN', ...statements];
    }
    this.ended = true;
    const client = await this.connection();
    const results = await client.query(statements.join('; '));
    const last = Array.isArray(results) ? (results.at(-1) as pg.QueryResult) : results;
    if (last.command !== 'COMMIT') {
      throw new Error(`the transaction ended with ${last.command}, not COMMIT`);
    }
  }
}

/**
 * The transaction a request runs in, found by repositories themselves: code called inside `run()`
 * (a service, its repository) joins the transaction without a parameter threaded through it, and
 * the look-up costs one AsyncLocalStorage read. Only keyed creates open one; every other
 * statement runs alone on the primary's pool.
 */
@Injectable()
export class TransactionScope {
  private readonly storage = new AsyncLocalStorage<Transaction>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly primary: PrimaryPool,
  ) {}

  /** The connection gate of the primary's pool (undefined before it connects). */
  get connectionGate(): ConnectionGate | undefined {
    return driverGate(this.dataSource);
  }

  /** Where a statement runs: in the open transaction, else straight on the primary's pool. */
  queryable(): Queryable {
    return this.storage.getStore() ?? this.primary;
  }

  /** True inside `run()`: statements join its transaction. */
  inTransaction(): boolean {
    return this.storage.getStore() !== undefined;
  }

  /**
   * Runs `work` in one transaction on a connection of the primary's pool: committed when it
   * resolves (unless it ended the transaction with `tx.commit()`, which sends its last
   * statements with the COMMIT), rolled back when it throws. BEGIN goes out with the work's first
   * statement (see Transaction). The connection is never handed back to the pool inside a
   * transaction: when even the rollback fails, the connection is destroyed and the original error
   * is the one reported.
   */
  async run<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    const pool = driverPool(this.dataSource);
    if (!pool) throw new Error('the database connection is not initialised');
    const tx = new Transaction(pool);
    let broken = false;
    try {
      const value = await this.storage.run(tx, () => work(tx));
      if (!tx.isEnded) await tx.commit();
      return value;
    } catch (error) {
      broken = !(await tx.rollback());
      throw error;
    } finally {
      tx.release(broken);
    }
  }
}
