import {
  BadRequestException,
  type CallHandler,
  ConflictException,
  type ExecutionContext,
  HttpException,
  HttpStatus,
  Injectable,
  Logger,
  type NestInterceptor,
  UnprocessableEntityException,
} from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { hash } from 'node:crypto';
import type { Request, Response } from 'express';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { errorKindOf } from '../common/errors.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../common/patterns.js';
import { AppConfig } from '../config/app-config.js';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { retryingOnFailover } from '../database/failover-retry.js';
import { TransactionScope } from '../database/transaction-scope.js';
import { toHttpError } from '../http/all-exceptions.filter.js';
import {
  locationOf,
  type LocationOf,
  RESOURCE_HEADERS,
  resourceHeaders,
} from '../http/etag.decorators.js';
import { ApiIdempotencyKey } from '../http/openapi.decorators.js';
import type { IdempotencyKey } from './idempotency-key.entity.js';
import { IdempotencyKeysRepository, type StoredOutcome } from './idempotency-keys.repository.js';

const LOCK_NOT_AVAILABLE = '55P03';

/** 1 to 255 characters of visible ASCII (a repeated header arrives joined by ", ": refused). */
export function parseIdempotencyKey(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw new BadRequestException('Idempotency-Key must be 1 to 255 visible ASCII characters');
  }
  return value;
}

/** JSON with object keys sorted: two bodies that are the same JSON value give the same text. */
function canonicalJson(value: unknown): string {
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
 * SHA-256 of the method, the path (as the route and its decoded parameters, so `/users/%31/posts`
 * is `/users/1/posts`) and the body as a JSON value.
 */
function fingerprint(request: Request): string {
  const route = (request.route as { path?: string } | undefined)?.path ?? request.path;
  // One-shot: a Hash object per request costs more than the hashing.
  return hash(
    'sha256',
    `${request.method} ${route} ${canonicalJson(request.params)}\n${canonicalJson(request.body)}`,
  );
}

/**
 * Idempotent creates (`Idempotency-Key` on POST). The handler runs in a transaction that, when it
 * is done, inserts the key with the outcome and commits, all in one message: a crash never leaves
 * a resource without its key nor a key without its outcome. A create that fails with one of the
 * service's own errors (404, 409: the database decided) is undone and its outcome stored with the
 * key in the same round trip. Anything else (a 400 from validation, a 5xx) rolls everything back,
 * so a retry runs again: a 5xx may even have committed when the COMMIT's answer was lost, which a
 * retry with the same key then replays.
 *
 * The key's INSERT decides between requests with one key. Whichever commits it first has its
 * outcome stored; a later one (a retry, a concurrent duplicate) fails on that key, is rolled back
 * with everything its handler did, and replays the stored outcome (or 422 for another request).
 * A key held by a request that has not committed yet (its COMMIT waiting for a synchronous
 * standby, say) is waited for at most IDEMPOTENCY_WAIT_MS, then 409. The handler's only effects
 * must be its statements in this transaction (they are undone with it), as for any retried
 * request.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Idempotency');

  constructor(
    private readonly scope: TransactionScope,
    private readonly keys: IdempotencyKeysRepository,
    private readonly config: AppConfig,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    if (key === undefined) return next.handle();
    const location = locationOf(context.getHandler());
    return from(this.once(key, request, http.getResponse<Response>(), next, location));
  }

  /**
   * The whole keyed transaction, in two round trips: BEGIN goes out with the handler's first
   * statement, the key and its outcome with the COMMIT.
   */
  private async once(
    key: string,
    request: Request,
    response: Response,
    next: CallHandler,
    location: LocationOf<unknown> | undefined,
  ): Promise<unknown> {
    const requestFingerprint = fingerprint(request);
    const store = (outcome: StoredOutcome) =>
      this.keys.store(key, requestFingerprint, outcome, this.config.idempotency.waitMs);
    // A failover error reruns the whole transaction (docs/failover.md); the key makes it safe.
    const retry = {
      budgetMs: this.config.database.failoverRetryMs,
      abandoned: () => response.closed,
      onRetry: (error: unknown, attempt: number) =>
        this.logger.warn({
          requestId: request.id,
          msg: `${request.method} ${request.path}: keyed create run again after a failover error (retry ${attempt + 1}): ${failureOf(error)}`,
        }),
    };
    let outcome: StoredOutcome;
    try {
      outcome = await retryingOnFailover(this.scope, retry).run(async (tx) => {
        // Runs the handler (and the steps and interceptors inside this one).
        const handled = await lastValueFrom(next.handle()).then(
          (body) => ({ body: body as object }),
          (error: unknown) => ({ error }),
        );
        if ('body' in handled) {
          // The headers of the created resource, from what the handler returned.
          const headers = resourceHeaders(handled.body, location);
          const created = { status: HttpStatus.CREATED, headers, body: handled.body };
          await tx.commit(...store(created));
          return created;
        }
        if (!errorKindOf(handled.error)) throw handled.error;
        // A 404 or 409 the database decided: stored, and answered as stored (mapped once).
        const { status, body } = toHttpError(handled.error);
        const failed = { status, headers: {}, body };
        await tx.undoAndCommit(...store(failed));
        return failed;
      });
    } catch (error) {
      removeResourceHeaders(response);
      if ((error as { code?: string } | null)?.code === LOCK_NOT_AVAILABLE) throw inProgress();
      // Replayed: a request whose key was stored first, and one refused before any write
      // (validation) whose key is stored, since the key decides first (another request: 422).
      const keyTaken = this.keys.isStored(error);
      if (!keyTaken && !isClientError(error)) throw error;
      // A refused request (400) changed nothing: when the key cannot be looked up (an exhausted
      // pool, a database away), its own answer stands.
      const stored = await this.keys.find(key).catch((lookup: unknown) => {
        throw keyTaken || !isDatabaseUnavailable(lookup) ? lookup : error;
      });
      // Purged since (past its TTL): as for a key still in progress, a retry runs anew.
      if (!stored) throw keyTaken ? inProgress() : error;
      // The stored outcome is the answer, whatever this request's own handler did.
      outcome = replay(stored, key, requestFingerprint);
    }
    // The answer is the outcome's, headers included: none that an attempt wrote stays beside them.
    removeResourceHeaders(response);
    response.status(outcome.status);
    for (const [name, value] of Object.entries(outcome.headers)) response.setHeader(name, value);
    return outcome.body;
  }
}

/**
 * An attempt's handler steps write the created resource's headers as they go; when the answer is
 * not that attempt's create (a replay, a failure, a later attempt), none of them stays.
 */
function removeResourceHeaders(response: Response): void {
  for (const name of RESOURCE_HEADERS) response.removeHeader(name);
}

/** A failure's SQLSTATE or socket code and its message, which carry no request values. */
function failureOf(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return `${typeof code === 'string' ? `${code} ` : ''}${String(message)}`;
}

function isClientError(error: unknown): boolean {
  return error instanceof HttpException && error.getStatus() < 500;
}

function inProgress(): ConflictException {
  return new ConflictException('a request with this Idempotency-Key is still in progress');
}

function replay(stored: IdempotencyKey, key: string, requestFingerprint: string): StoredOutcome {
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

/**
 * Makes a create safe to retry with `Idempotency-Key` (documented). The interceptor is put first,
 * outside the route's other interceptors whatever the decorators' order, so the outcome it stores
 * holds the headers they set.
 */
export function Idempotent(): MethodDecorator {
  return (target, property, descriptor) => {
    ApiIdempotencyKey()(target, property, descriptor);
    const handler = descriptor.value as object;
    const inner = (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown[]) ?? [];
    Reflect.defineMetadata(INTERCEPTORS_METADATA, [IdempotencyInterceptor, ...inner], handler);
    return descriptor;
  };
}
