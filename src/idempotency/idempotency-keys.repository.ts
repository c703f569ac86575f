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
const SAVEPOINT = 'idempotent_create';
const KEY_CONSTRAINT = 'PK_idempotency_keys';

/**
 * The statements of idempotent creates. All but the purge and the read of a stored outcome run in
 * the transaction the caller opened (TransactionScope): the key, the resource and the outcome
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
    this.findSql = `SELECT ${sql.selectList} FROM ${sql.table} WHERE ${key} = $1`;
    this.purgeSql =
      `DELETE FROM ${sql.table} WHERE ${key} IN (SELECT ${key} FROM ${sql.table} ` +
      `WHERE ${sql.column('createdAt')} < now() - make_interval(hours => $1) ` +
      `LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)`;
  }

  /**
   * The statements that open a keyed create's transaction (TransactionScope.run sends them with
   * BEGIN as one message, written with the handler's first statement). They insert the key,
   * waiting at most `waitMs` for a concurrent request that holds it: when that one commits, or
   * when the key was stored before, the insert fails with a unique violation (isStored), and after
   * `waitMs` with 55P03, lock_not_available; either way nothing after it runs, and PostgreSQL
   * refuses the handler's statement. Then they set the server's default lock_timeout again, so
   * the wait bounds only the key and the create that follows waits like any other, and a
   * savepoint, so a create that fails can be undone while the key stays to store that failure.
   * `SET LOCAL`: this transaction only, so it is safe behind PgBouncer's transaction pooling.
   *
   * One message, so nothing of it runs outside the transaction (were BEGIN to fail, e.g. a stray
   * cancel, nothing after it in the message would run). A message of several statements takes no
   * parameters: the key (1 to 255 visible ASCII characters, parseIdempotencyKey) and the
   * fingerprint (hex) are quoted by pg's escapeLiteral.
   */
  claim(key: string, fingerprint: string, waitMs: number): string {
    const n = this.names;
    return [
      `SET LOCAL lock_timeout = ${Math.trunc(waitMs)}`,
      `INSERT INTO ${n.table} (${n.key}, ${n.fingerprint}) ` +
        `VALUES (${escapeLiteral(key)}, ${escapeLiteral(fingerprint)})`,
      'SET LOCAL lock_timeout TO DEFAULT',
      `SAVEPOINT ${SAVEPOINT}`,
    ].join('; ');
  }

  /** Whether the claim failed because the key is stored (by a request that has committed). */
  isStored(error: unknown): boolean {
    return isUniqueViolation(error, KEY_CONSTRAINT);
  }

  /** The stored key and outcome; undefined if it has just been purged. */
  async find(key: string): Promise<IdempotencyKey | undefined> {
    const [row] = await this.scope.queryable().query(this.findSql, [key]);
    return row && this.sql.toEntity(row);
  }

  /** After a create that failed: undoes what it did, keeps the key (send before storeOutcome). */
  undoCreate(): string {
    return `ROLLBACK TO SAVEPOINT ${SAVEPOINT}`;
  }

  /**
   * The outcome's UPDATE, for the caller to send with its COMMIT as one message
   * (Transaction.commit), so without parameters: the headers and body as JSON text quoted by pg's
   * escapeLiteral, like the key.
   */
  storeOutcome(key: string, { status, headers, body }: StoredOutcome): string {
    const n = this.names;
    return (
      `UPDATE ${n.table} SET ${n.status} = ${Math.trunc(status)}, ` +
      `${n.headers} = ${escapeLiteral(JSON.stringify(headers))}, ` +
      `${n.body} = ${escapeLiteral(JSON.stringify(body))} ` +
      `WHERE ${n.key} = ${escapeLiteral(key)}`
    );
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
