import { BadRequestException, UnsupportedMediaTypeException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { requestIdFrom } from './request-id.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

declare module 'express-serve-static-core' {
  interface Request {
    /** The request id: the caller's `x-request-id` when well-formed, else a new UUID. */
    id: string;
  }
}

/** Gives every request an id and echoes it in `x-request-id` (set first, so errors carry it). */
export function requestId(request: Request, response: Response, next: NextFunction): void {
  request.id = requestIdFrom(request.headers['x-request-id']);
  response.setHeader('x-request-id', request.id);
  next();
}

export const MAX_BODY_DEPTH = 64;

/** True when a parsed JSON value nests deeper than `max` arrays/objects (iterative: no stack). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * 400 for a body nested more than MAX_BODY_DEPTH levels: validation and serialisation recurse,
 * and a few thousand levels would overflow the stack (a 500).
 */
export function limitBodyDepth(request: Request, _response: Response, next: NextFunction): void {
  if (nestedDeeperThan(request.body, MAX_BODY_DEPTH)) {
    next(new BadRequestException(`request body is nested more than ${MAX_BODY_DEPTH} levels deep`));
    return;
  }
  next();
}

/** JSON bodies: `application/json`, and on PATCH also `application/merge-patch+json`. */
export function isJsonBody(request: Request): boolean {
  const types =
    request.method === 'PATCH'
      ? ['application/json', 'application/merge-patch+json']
      : ['application/json'];
  return request.is(types) !== false;
}

function hasBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
  );
}

/** 415 for a POST, PUT or PATCH whose body is not JSON (a request without a body passes). */
export function requireJsonBody(request: Request, _response: Response, next: NextFunction): void {
  if (BODY_METHODS.has(request.method) && hasBody(request) && !isJsonBody(request)) {
    next(
      new UnsupportedMediaTypeException(
        'request body must be JSON (Content-Type: application/json)',
      ),
    );
    return;
  }
  next();
}
