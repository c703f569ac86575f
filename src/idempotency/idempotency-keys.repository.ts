import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import pg from 'pg';
import type { Repository } from 'typeorm';
import { isUniqueViolation } from '../database/database-errors.js';
import { EntitySql } from '../database/entity-sql.js';
import { TransactionScope } from '../database/transaction-scope.js';
import { IdempotencyKey } from './idempotency-key.entity.js';

const { escapeLiteral } = pg;

/** What a create answered: its status, the headers that go with it and its body. */
export interface StoredOutcome {
  status: number;
  headers: Record<string, string>;
  body: object;
}

const PURGE_BATCH = 1000;
/** Batches per purge run, so one run stays short whatever the backlog; the next run goes on. */
const PURGE_MAX_BATCHES = 50;
const KEY_CONSTRAINT = 'PK_idempotency_keys';

/**
 * The statements of idempotent creates. The key's INSERT runs in the transaction the caller opened
 * (TransactionScope), after the create's own statements: the key, the resource and the outcome
 * commit together or not at all.
 */
@Injectable()
export class IdempotencyKeysRepository {
  private readonly findSql: string;
  private readonly purgeSql: string;
  /** Quoted names, for the statements built per request. */
  private readonly names: Record<
    'table' | 'key' | 'fingerprint' | 'status' | 'headers' | 'body',
    string
  >;
  private readonly sql: EntitySql<IdempotencyKey>;

  constructor(
    @InjectRepository(IdempotencyKey) private readonly keys: Repository<IdempotencyKey>,
    private readonly scope: TransactionScope,
  ) {
    this.sql = new EntitySql(keys);
    const { sql } = this;
    const key = sql.column('key');
    this.names = {
      table: sql.table,
      key,
      fingerprint: sql.column('fingerprint'),
      status: sql.column('status'),
      headers: sql.column('headers'),
      body: sql.column('body'),
    };
    // A row lock takes a transaction id and is written to the WAL, so the statement's implicit
    // commit waits for the synchronous standby like any write's (one without WAL never waits).
    this.findSql = `SELECT ${sql.selectList} FROM ${sql.table} WHERE ${key} = $1 FOR KEY SHARE`;
    this.purgeSql =
      `DELETE FROM ${sql.table} WHERE ${key} IN (SELECT ${key} FROM ${sql.table} ` +
      `WHERE ${sql.column('createdAt')} < now() - make_interval(hours => $1) ` +
      `LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)`;
  }

  /**
   * The statements that store a keyed create's key with its outcome, for the caller to send with
   * its COMMIT as one message (Transaction.commit), after the handler's own statements. The key's
   * INSERT is what makes a create idempotent: it fails with a unique violation (isStored) when the
   * key is stored already, and when another transaction holds the key uncommitted it waits for
   * that one's end, at most `waitMs` (then 55P03, lock_not_available). The timeout is set here,
   * just before the key, so that it bounds the wait for the key and nothing else: the handler's
   * statements before it wait for their locks like any other. `SET LOCAL`: this transaction only,
   * safe behind PgBouncer's transaction pooling.
   *
   * A message of several statements takes no parameters: the key (1 to 255 visible ASCII
   * characters, parseIdempotencyKey), the fingerprint (hex), and the headers and body as JSON text
   * are quoted by pg's escapeLiteral.
   */
  store(key: string, fingerprint: string, outcome: StoredOutcome, waitMs: number): string[] {
    const n = this.names;
    const { status, headers, body } = outcome;
    return [
      `SET LOCAL lock_timeout = ${Math.trunc(waitMs)}`,
      `INSERT INTO ${n.table} (${n.key}, ${n.fingerprint}, ${n.status}, ${n.headers}, ${n.body}) ` +
        `VALUES (${escapeLiteral(key)}, ${escapeLiteral(fingerprint)}, ${Math.trunc(status)}, ` +
        `${escapeLiteral(JSON.stringify(headers))}, ${escapeLiteral(JSON.stringify(body))})`,
    ];
  }

  /** Whether storing the key failed because it is stored already (by a request that committed). */
  isStored(error: unknown): boolean {
    return isUniqueViolation(error, KEY_CONSTRAINT);
  }

  /**
   * The stored key and outcome, to replay; undefined if it has just been purged. It returns only
   * once the synchronous standby has the stored outcome: the statement locks the row (FOR KEY
   * SHARE, which blocks no create), so it commits WAL of its own after the outcome's, and a
   * commit returns only when the standby has everything up to it. A stored outcome may be on
   * this primary alone: its commit's wait for the standby was cut short (an operator's cancel, a
   * terminated connection) or its connection broke mid-wait and the server crashed. Replaying it
   * at once would acknowledge a create a failover could take back; this way the replay waits, as
   * the first answer would have, and a statement timeout meanwhile is a 503 like the first one's.
   */
  async find(key: string): Promise<IdempotencyKey | undefined> {
    const [row] = await this.scope.queryable().query(this.findSql, [key]);
    return row && this.sql.toEntity(row);
  }

  /**
   * Deletes keys older than `ttlHours` in batches. SKIP LOCKED lets every replica purge at once
   * without waiting on each other, and never blocks a request that holds a key.
   * @returns how many keys were deleted
   */
  async purgeExpired(ttlHours: number): Promise<number> {
    let deleted = 0;
    for (let batch = 0; batch < PURGE_MAX_BATCHES; batch++) {
      // Outside any transaction; TypeORM answers a DELETE with [rows, affected].
      const [, count] = await this.keys.query<[unknown, number]>(this.purgeSql, [ttlHours]);
      deleted += count;
      if (count < PURGE_BATCH) break;
    }
    return deleted;
  }
}
