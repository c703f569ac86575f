import { BadRequestException, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { IDEMPOTENCY_KEY_PATTERN } from '../common/patterns.js';

/** 1 to 255 characters of visible ASCII (a repeated header arrives joined by ", ": refused). */
export function parseIdempotencyKey(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw new BadRequestException('Idempotency-Key must be 1 to 255 visible ASCII characters');
  }
  return value;
}

/** The request's Idempotency-Key header, validated before anything runs; undefined when absent. */
export const IdempotencyKeyHeader = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    parseIdempotencyKey(context.switchToHttp().getRequest<Request>().headers['idempotency-key']),
);
