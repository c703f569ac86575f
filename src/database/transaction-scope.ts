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
 * BEGIN and the opening statements are not sent on their own: they go out with the first
 * statement of the work, in the same network write, and that statement waits behind them on the
 * server. So it runs only if the opening succeeded (after an error PostgreSQL refuses every
 * statement of the transaction with 25P02); the work learns the opening's own outcome from
 * `opened()`.
 */
export class Transaction implements Queryable {
  private opening: string | undefined;
  private openedError: Promise<{ error: unknown } | undefined> | undefined;
  private ended = false;

  constructor(
    private readonly client: pg.PoolClient,
    opening: string,
  ) {
    this.opening = `BEGIN; ${opening}`;
  }

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
   * Resolves once the opening succeeded; else rejects with the error of its first statement that
   * failed (nothing after it ran). Sends the opening alone if no statement has carried it yet.
   */
  async opened(): Promise<void> {
    if (!this.isBegun) this.begin();
    const failed = await this.openedError;
    if (failed) throw failed.error;
  }

  /**
   * Sends `statements` (without parameters) and COMMIT as one message and ends the transaction:
   * it commits only if every statement succeeded (the first that fails stops the rest, COMMIT
   * included, and its error is thrown). A COMMIT whose answer is lost fails with
   * CommitOutcomeUnknownError (cancellingClient): it may have committed.
   */
  async commit(...statements: string[]): Promise<void> {
    await this.opened();
    this.ended = true;
    const results = await this.client.query([...statements, 'COMMIT'].join('; '));
    const last = Array.isArray(results) ? (results.at(-1) as pg.QueryResult) : results;
    if (last.command !== 'COMMIT') {
      throw new Error(`the transaction ended with ${last.command}, not COMMIT`);
    }
  }

  /** Whether BEGIN has been sent (it goes with the first statement). */
  get isBegun(): boolean {
    return this.opening === undefined;
  }

  /** Whether commit() ended the transaction. */
  get isEnded(): boolean {
    return this.ended;
  }

  /** Queues BEGIN and the opening. */
  private begin(): void {
    const opening = this.opening!;
    this.opening = undefined;
    // Settled here, so that its error is never an unhandled rejection; opened() reports it.
    this.openedError = this.client.query(opening).then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
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
   * statements with the COMMIT), rolled back when it throws. `opening`: statements without
   * parameters (a simple query may hold several; the first that fails stops the rest), sent with
   * BEGIN and with the work's first statement (see Transaction). The connection is never handed
   * back to the pool inside a transaction: when even the rollback fails, the connection is
   * destroyed and the original error is the one reported.
   */
  async run<T>(opening: string, work: (tx: Transaction) => Promise<T>): Promise<T> {
    const pool = driverPool(this.dataSource);
    if (!pool) throw new Error('the database connection is not initialised');
    const client = await pool.connect();
    const tx = new Transaction(client, opening);
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
