import {
  BadRequestException,
  type CallHandler,
  ConflictException,
  type ExecutionContext,
  HttpStatus,
  Injectable,
  type NestInterceptor,
  UnprocessableEntityException,
} from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { errorKindOf } from '../common/errors.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../common/patterns.js';
import { AppConfig } from '../config/app-config.js';
import { retryingOnFailover } from '../database/failover-retry.js';
import { TransactionScope } from '../database/transaction-scope.js';
import { toHttpError } from '../http/all-exceptions.filter.js';
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

/**
 * Idempotent creates (`Idempotency-Key` on POST). The key row is inserted first, in the
 * transaction that then runs the handler and stores its outcome, so a crash never leaves a
 * resource without its key nor a key without its outcome, and concurrent requests with one key
 * queue on that row: they wait for the first to commit and replay its outcome (the handler's
 * statement, sent with the claim, never takes effect), or give up after IDEMPOTENCY_WAIT_MS with
 * 409. A create that fails with one of the service's own errors (404, 409: the database decided)
 * stores that outcome too. Anything else (a 400 from validation, a 5xx) rolls everything back,
 * key included, so a retry runs again: a 5xx may even have committed when the COMMIT's answer was
 * lost, which a retry with the same key then replays. The handler's only effects must be its
 * statements in this transaction (they are undone with it), as for any retried request.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
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
    return from(this.once(key, request, http.getResponse<Response>(), next));
  }

  /**
   * The whole keyed transaction, in two round trips when the key is new: BEGIN and the key's claim
   * (IdempotencyKeysRepository.claim) go out with the handler's statement, then the outcome with
   * the COMMIT.
   */
  private async once(
    key: string,
    request: Request,
    response: Response,
    next: CallHandler,
  ): Promise<unknown> {
    const requestFingerprint = fingerprint(request);
    const claim = this.keys.claim(key, requestFingerprint, this.config.idempotency.waitMs);
    let failure: { error: unknown } | undefined;
    // A failover error reruns the whole transaction (docs/failover.md); the key makes it safe.
    const retry = {
      budgetMs: this.config.database.failoverRetryMs,
      abandoned: () => response.closed,
    };
    let outcome: StoredOutcome;
    try {
      outcome = await retryingOnFailover(this.scope, retry).run(claim, async (tx) => {
        // A new attempt after a failover error: nothing of the one before counts.
        failure = undefined;
        for (const name of STORED_HEADERS) response.removeHeader(name);
        // Runs the handler (and the interceptors inside this one, which set its headers). Its
        // first statement waits on the server behind the claim and takes effect only if the
        // claim succeeds, so the claim's outcome counts first.
        const handled = await lastValueFrom(next.handle()).then(
          (body) => ({ body: body as object }),
          (error: unknown) => ({ error }),
        );
        await tx.opened();
        let created: StoredOutcome;
        if ('body' in handled) {
          created = {
            status: HttpStatus.CREATED,
            headers: createdHeaders(response),
            body: handled.body,
          };
        } else {
          if (!errorKindOf(handled.error)) throw handled.error;
          failure = handled;
          const { status, body } = toHttpError(handled.error);
          created = { status, headers: {}, body };
        }
        const undo = failure ? [this.keys.undoCreate()] : [];
        await tx.commit(...undo, this.keys.storeOutcome(key, created));
        return created;
      });
    } catch (error) {
      if (this.keys.isStored(error)) {
        const stored = await this.keys.find(key);
        // Purged since (past its TTL): as for a key still in progress, a retry runs anew.
        if (!stored) throw inProgress();
        outcome = replay(stored, key, requestFingerprint);
      } else if ((error as { code?: string } | null)?.code === LOCK_NOT_AVAILABLE) {
        throw inProgress();
      } else {
        throw error;
      }
    }
    // The first answer of a stored 404/409 comes from the exception filter, like any other.
    if (failure) throw failure.error;
    response.status(outcome.status);
    for (const [name, value] of Object.entries(outcome.headers)) response.setHeader(name, value);
    return outcome.body;
  }
}

/** The headers of a 201 worth replaying: where the resource is, and its ETag. */
/** The headers of a create that its replays carry. */
const STORED_HEADERS = ['Location', 'ETag'];

function createdHeaders(response: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of STORED_HEADERS) {
    const value = response.getHeader(name);
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
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
