import { AsyncLocalStorage } from 'node:async_hooks';
import type { Writable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import type { ConnectionGate } from './connection-gate.js';
import { driverGate, driverPool, PrimaryPool, type Queryable } from './queryable.js';

type Row = Record<string, unknown>;

/**
 * The open transaction: one connection of the primary's pool, used through pg directly (a TypeORM
 * query runner costs more per statement than the statement: bench/README.md, "Profile-driven
 * changes") and in pg's pipeline mode, so that statements written together cost one round trip.
 * Each round trip costs the service a socket write and a read or two, more than the statements'
 * own work: a keyed create takes two (see IdempotencyInterceptor).
 *
 * BEGIN is not sent on its own: it goes out with the first statement of the work, in the same
 * network write, and that statement waits behind it on the server. The last statements go out
 * with the COMMIT (`commit()`).
 */
export class Transaction implements Queryable {
  private begun: Promise<{ error: unknown } | undefined> | undefined;
  private ended = false;

  constructor(private readonly client: pg.PoolClient) {}

  async query<R = Row>(sql: string, parameters?: unknown[]): Promise<R[]> {
    const result = this.isBegun
      ? this.client.query(sql, parameters)
      : inOneWrite(this.client, () => {
          this.begin();
          return this.client.query(sql, parameters);
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

  /** Queues BEGIN. */
  private begin(): void {
    // Settled here, so that its error is never an unhandled rejection; end() reports it.
    this.begun = this.client.query('BEGIN').then(
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
    const results = await this.client.query(statements.join('; '));
    const last = Array.isArray(results) ? (results.at(-1) as pg.QueryResult) : results;
    if (last.command !== 'COMMIT') {
      throw new Error(`the transaction ended with ${last.command}, not COMMIT`);
    }
  }
}

/**
 * The transaction a request runs in, found by repositories themselves: code called inside `run()`
 * (a service, its repository) joins the transaction without a parameter threaded through it.
 * Only keyed creates open one; every other statement runs alone on the primary's pool, and the
 * look-up costs one AsyncLocalStorage read.
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
    const client = await pool.connect();
    const tx = new Transaction(client);
    let broken = false;
    setPipeline(client, true);
    try {
      const value = await this.storage.run(tx, () => work(tx));
      if (!tx.isEnded) await tx.commit();
      return value;
    } catch (error) {
      // Queued behind anything still in flight, so once it is answered nothing else is pending.
      // Not needed once a COMMIT was answered: the transaction is over (committed or not).
      if (tx.isBegun && !(tx.isEnded && client.getTransactionStatus() === 'I')) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
      }
      throw error;
    } finally {
      if (!broken) setPipeline(client, false);
      client.release(broken);
    }
  }
}

/**
 * pg's pipeline mode (a client option, set here only while this transaction holds the
 * connection): each query is written as soon as it is queued, without waiting for the answer to
 * the previous one. Switched off only when nothing is in flight.
 */
function setPipeline(client: pg.PoolClient, on: boolean): void {
  (client as { pipeline: boolean }).pipeline = on;
}

/** The queries `queue` queues go out in one network write (pg writes each as it is queued). */
function inOneWrite<T>(client: pg.PoolClient, queue: () => T): T {
  const { stream } = (client as unknown as { connection: { stream: Writable } }).connection;
  stream.cork();
  try {
    return queue();
  } finally {
    stream.uncork();
  }
}
