import { randomUUID } from 'node:crypto';
import { REQUEST_ID_PATTERN } from './patterns.js';

/**
 * The caller's request id (HTTP `x-request-id` header, gRPC `x-request-id` metadata) when it is
 * 1 to 128 of `[A-Za-z0-9._:-]`, else a new UUID. Both transports use this one rule.
 */
export function requestIdFrom(incoming: unknown): string {
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming)
    ? incoming
    : randomUUID();
}
