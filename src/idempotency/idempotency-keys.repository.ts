import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { EntitySql } from '../database/entity-sql.js';
import { TransactionScope } from '../database/transaction-scope.js';
import { IdempotencyKey } from './idempotency-key.entity.js';

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

/**
 * The statements of idempotent creates. All but the purge run in the transaction the caller opened
 * (TransactionScope): the key, the resource and the outcome commit together or not at all.
 */
@Injectable()
export class IdempotencyKeysRepository {
  private readonly claimSql: string;
  private readonly findSql: string;
  private readonly storeSql: string;
  private readonly purgeSql: string;
  private readonly sql: EntitySql<IdempotencyKey>;

  constructor(
    @InjectRepository(IdempotencyKey) private readonly keys: Repository<IdempotencyKey>,
    private readonly scope: TransactionScope,
  ) {
    this.sql = new EntitySql(keys);
    const { sql } = this;
    const key = sql.column('key');
    this.claimSql =
      `INSERT INTO ${sql.table} (${key}, ${sql.column('fingerprint')}) VALUES ($1, $2) ` +
      `ON CONFLICT DO NOTHING RETURNING ${key}`;
    this.findSql = `SELECT ${sql.selectList} FROM ${sql.table} WHERE ${key} = $1`;
    this.storeSql =
      `UPDATE ${sql.table} SET ${sql.column('status')} = $2, ${sql.column('headers')} = $3, ` +
      `${sql.column('body')} = $4 WHERE ${key} = $1`;
    this.purgeSql =
      `DELETE FROM ${sql.table} WHERE ${key} IN (SELECT ${key} FROM ${sql.table} ` +
      `WHERE ${sql.column('createdAt')} < now() - make_interval(hours => $1) ` +
      `LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)`;
  }

  /**
   * Inserts the key, waiting at most `waitMs` for a concurrent request that holds it (then 55P03,
   * lock_not_available). True when this request now owns the key; false when it was already stored.
   * The wait bounds only this statement: the create that follows runs with the server's default.
   */
  async claim(key: string, fingerprint: string, waitMs: number): Promise<boolean> {
    const db = this.scope.queryable();
    // SET LOCAL: this transaction only, so it is safe behind PgBouncer's transaction pooling.
    await db.query(`SET LOCAL lock_timeout = ${Math.trunc(waitMs)}`);
    const claimed = await db.query(this.claimSql, [key, fingerprint]);
    if (claimed.length === 0) return false;
    // One round trip, no parameters (a simple query may hold two statements).
    await db.query(`SET LOCAL lock_timeout TO DEFAULT; SAVEPOINT ${SAVEPOINT}`);
    return true;
  }

  async find(key: string): Promise<IdempotencyKey> {
    const [row] = await this.scope.queryable().query(this.findSql, [key]);
    return this.sql.toEntity(row);
  }

  /** After the create: keep what it did (`RELEASE`), or undo it but keep the key (`ROLLBACK TO`). */
  async endCreate(keep: boolean): Promise<void> {
    const verb = keep ? 'RELEASE SAVEPOINT' : 'ROLLBACK TO SAVEPOINT';
    await this.scope.queryable().query(`${verb} ${SAVEPOINT}`);
  }

  async storeOutcome(key: string, { status, headers, body }: StoredOutcome): Promise<void> {
    await this.scope.queryable().query(this.storeSql, [key, status, headers, body]);
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
