import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { driverPool, PrimaryPool, type Queryable } from './queryable.js';

/** One statement and its parameters. */
export interface Statement {
  text: string;
  values?: unknown[];
}

type Row = Record<string, unknown>;

/**
 * The open transaction: one connection of the primary's pool, straight on pg (a TypeORM query
 * runner costs more per statement than the statement: bench/README.md, "Profile-driven changes").
 */
export class Transaction implements Queryable {
  private ended = false;

  constructor(private readonly client: pg.PoolClient) {}

  async query<R = Row>(sql: string, parameters?: unknown[]): Promise<R[]> {
    return (await this.client.query(sql, parameters)).rows as R[];
  }

  /**
   * Sends `statements` and COMMIT in one round trip (pipelined) and ends the transaction: it
   * commits only if every statement succeeded. One that fails aborts the transaction, so
   * PostgreSQL answers the COMMIT with a ROLLBACK and that statement's error is thrown. When the
   * COMMIT itself fails (e.g. CommitOutcomeUnknownError: the connection broke, so even a statement
   * whose answer was lost may have committed), its error is the one thrown.
   */
  async commit(...statements: Statement[]): Promise<void> {
    const { client } = this;
    this.ended = true;
    // Pipeline mode only while these are in flight: pg sends each query without waiting for the
    // previous one's answer. It is switched off again once all of them are answered, never
    // before (pg would lose track of the queries already sent).
    setPipeline(client, true);
    const answers = await Promise.allSettled([
      ...statements.map(({ text, values }) => client.query(text, values)),
      client.query('COMMIT'),
    ]);
    setPipeline(client, false);
    const commit = answers.pop()!;
    if (commit.status === 'rejected') throw commit.reason;
    const failed = answers.find((answer) => answer.status === 'rejected');
    if (failed) throw failed.reason;
    if (commit.value.command !== 'COMMIT') {
      throw new Error(`the transaction ended with ${commit.value.command}, not COMMIT`);
    }
  }

  /** Whether the transaction is over (commit() ran), else it must still be ended. */
  get isEnded(): boolean {
    return this.ended;
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

  /** Where a statement runs: in the open transaction, else straight on the primary's pool. */
  queryable(): Queryable {
    return this.storage.getStore() ?? this.primary;
  }

  /**
   * Runs `work` in one transaction on a connection of the primary's pool: committed when it
   * resolves (unless it ended the transaction with `commit()`, which sends its last statements
   * with the COMMIT), rolled back when it throws. BEGIN costs no round trip of its own: it goes
   * out in one message with `opening`, statements without parameters (a simple query may hold
   * several; the first that fails stops the rest), and `work` receives their rows, one array per
   * statement. The connection is never handed back to the pool inside a transaction: when even
   * the rollback fails, the connection is destroyed and the original error is the one reported.
   */
  async run<T>(
    opening: string,
    work: (tx: Transaction, opened: Row[][]) => Promise<T>,
  ): Promise<T> {
    const pool = driverPool(this.dataSource);
    if (!pool) throw new Error('the database connection is not initialised');
    const client = await pool.connect();
    const tx = new Transaction(client);
    let broken = false;
    try {
      const results = (await client.query(`BEGIN; ${opening}`)) as unknown as pg.QueryResult[];
      const opened = results.slice(1).map((result) => result.rows as Row[]);
      const value = await this.storage.run(tx, () => work(tx, opened));
      if (!tx.isEnded) await tx.commit();
      return value;
    } catch (error) {
      if (client.getTransactionStatus() !== 'I') {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
      }
      throw error;
    } finally {
      client.release(broken);
    }
  }
}

function setPipeline(client: pg.PoolClient, on: boolean): void {
  (client as { pipeline: boolean }).pipeline = on;
}
