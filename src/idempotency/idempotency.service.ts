import {
  ConflictException,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
  UnprocessableEntityException,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import { toHttpError } from '../http/all-exceptions.filter.js';
import { AppConfig } from '../config/app-config.js';
import { EntitySql } from '../database/entity-sql.js';
import { IdempotencyKey } from './idempotency-key.entity.js';

/** What a create answers: the status, the headers that go with it and the body. */
export interface CreatedResponse {
  status: number;
  headers: Record<string, string>;
  body: object;
}

const PURGE_BATCH = 1000;
/** Batches per purge run, so one run stays short whatever the backlog; the next run goes on. */
const PURGE_MAX_BATCHES = 50;
const LOCK_NOT_AVAILABLE = '55P03';

/** JSON with object keys sorted: two bodies that are the same JSON value give the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Idempotent creates (`Idempotency-Key` on POST). The key row is inserted first, in the
 * transaction that then creates the resource and stores the outcome, so a crash never leaves a
 * resource without its key, and concurrent requests with one key queue on that row: they wait for
 * the first to commit and replay its outcome, or give up after IDEMPOTENCY_WAIT_MS with 409.
 * Keys are kept IDEMPOTENCY_KEY_TTL_HOURS, then purged in batches by every replica.
 */
@Injectable()
export class IdempotencyService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Idempotency');
  private purgeTimer?: NodeJS.Timeout;
  /** One batch of expired keys, generated once from the entity's metadata. */
  private readonly purgeSql: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {
    const keys = new EntitySql(dataSource.getRepository(IdempotencyKey));
    const key = keys.column('key');
    this.purgeSql =
      `DELETE FROM ${keys.table} WHERE ${key} IN (SELECT ${key} FROM ${keys.table} ` +
      `WHERE ${keys.column('createdAt')} < now() - make_interval(hours => $1) ` +
      `LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)`;
  }

  /**
   * Runs a create and answers it on `response`, returning the body. Without a key the create runs
   * as it is; with one, at most once per key (see the class). A create that fails with a 4xx the
   * database decided (404, 409) stores that outcome too; a 5xx stores nothing, so a retry runs.
   */
  async create(
    key: string | undefined,
    request: Request,
    response: Response,
    create: (manager?: EntityManager) => Promise<CreatedResponse>,
  ): Promise<object> {
    const outcome =
      key === undefined ? await create() : await this.once(key, fingerprint(request), create);
    response.status(outcome.status);
    for (const [name, value] of Object.entries(outcome.headers)) response.setHeader(name, value);
    return outcome.body;
  }

  private async once(
    key: string,
    requestFingerprint: string,
    create: (manager: EntityManager) => Promise<CreatedResponse>,
  ): Promise<CreatedResponse> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction();
      // How long to wait for a concurrent request holding this key (SET LOCAL: this transaction
      // only, so it is safe behind PgBouncer's transaction pooling).
      await runner.query(`SET LOCAL lock_timeout = ${this.config.idempotency.waitMs}`);
      const inserted = await runner.manager
        .createQueryBuilder()
        .insert()
        .into(IdempotencyKey)
        .values({ key, fingerprint: requestFingerprint })
        .orIgnore()
        .returning('"key"')
        .updateEntity(false)
        .execute();
      if ((inserted.raw as unknown[]).length === 0) {
        const stored = await runner.manager.findOneByOrFail(IdempotencyKey, { key });
        await runner.commitTransaction();
        return replay(stored, key, requestFingerprint);
      }

      const { outcome, error } = await this.createInSavepoint(runner, create);
      await runner.manager.update(IdempotencyKey, { key }, outcome);
      await runner.commitTransaction();
      // The first answer of a stored 404/409 comes from the exception filter, like any other.
      if (error !== undefined) throw error as Error;
      return outcome;
    } catch (error) {
      // Never hand the connection back inside a transaction (a savepoint included). A rollback
      // that fails means the connection is gone; the original error is the one to report.
      try {
        while (runner.isTransactionActive) await runner.rollbackTransaction();
      } catch {
        /* released below */
      }
      if ((error as { driverError?: { code?: string } }).driverError?.code === LOCK_NOT_AVAILABLE) {
        throw new ConflictException('a request with this Idempotency-Key is still in progress');
      }
      throw error;
    } finally {
      await runner.release();
    }
  }

  /** The create, in a savepoint: a 4xx it fails with is rolled back and becomes the outcome. */
  private async createInSavepoint(
    runner: QueryRunner,
    create: (manager: EntityManager) => Promise<CreatedResponse>,
  ): Promise<{ outcome: CreatedResponse; error?: unknown }> {
    await runner.startTransaction();
    try {
      const outcome = await create(runner.manager);
      await runner.commitTransaction();
      return { outcome };
    } catch (error) {
      await runner.rollbackTransaction();
      const { status, body } = toHttpError(error);
      if (status >= 500) throw error;
      return { outcome: { status, headers: {}, body }, error };
    }
  }

  onModuleInit(): void {
    const { purgeIntervalMs } = this.config.idempotency;
    if (purgeIntervalMs === 0) return;
    this.purgeTimer = setInterval(() => {
      this.purgeExpired().catch((error: unknown) =>
        this.logger.warn(`purge of expired keys failed: ${String(error)}`),
      );
    }, purgeIntervalMs);
    this.purgeTimer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.purgeTimer);
  }

  /**
   * Deletes keys older than the TTL in batches. SKIP LOCKED lets every replica purge at once
   * without waiting on each other, and never blocks a request that holds a key.
   * @returns how many keys were deleted
   */
  async purgeExpired(): Promise<number> {
    let deleted = 0;
    for (let batch = 0; batch < PURGE_MAX_BATCHES; batch++) {
      const [, count] = await this.dataSource.query<[unknown, number]>(this.purgeSql, [
        this.config.idempotency.ttlHours,
      ]);
      deleted += count;
      if (count < PURGE_BATCH) break;
    }
    if (deleted > 0) this.logger.log(`purged ${deleted} expired idempotency keys`);
    return deleted;
  }
}

/**
 * SHA-256 of the method, the path (as the route and its decoded parameters, so `/users/%31/posts`
 * is `/users/1/posts`) and the body as a JSON value.
 */
function fingerprint(request: Request): string {
  const route = (request.route as { path?: string } | undefined)?.path ?? request.path;
  return createHash('sha256')
    .update(`${request.method} ${route} ${canonicalJson(request.params)}\n`)
    .update(canonicalJson(request.body))
    .digest('hex');
}

function replay(stored: IdempotencyKey, key: string, requestFingerprint: string): CreatedResponse {
  if (stored.fingerprint !== requestFingerprint) {
    throw new UnprocessableEntityException(
      `Idempotency-Key ${key} was used for a different request`,
    );
  }
  return {
    status: stored.status!,
    headers: { ...stored.headers, 'Idempotent-Replayed': 'true' },
    body: stored.body!,
  };
}
