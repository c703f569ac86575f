import { BadRequestException, UnsupportedMediaTypeException } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { requestIdFrom } from '../common/request-id.js';
import type { Header } from './security-headers.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

declare module 'express-serve-static-core' {
  interface Request {
    /** The request id: the caller's `x-request-id` when well-formed, else a new UUID. */
    id: string;
  }
}

const MAX_BODY_DEPTH = 64;

/** True when a parsed JSON value nests deeper than `max` arrays/objects (iterative: no stack). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

const JSON_TYPES = ['application/json'];
const PATCH_TYPES = ['application/json', 'application/merge-patch+json'];
const SCIM_TYPES = ['application/json', 'application/scim+json'];

/**
 * JSON bodies: `application/json`, on PATCH also `application/merge-patch+json`, and under
 * /scim/v2 also SCIM's `application/scim+json` (RFC 7644 §3.1).
 */
export function isJsonBody(request: Request): boolean {
  const types = request.path.startsWith('/scim/v2/')
    ? SCIM_TYPES
    : request.method === 'PATCH'
      ? PATCH_TYPES
      : JSON_TYPES;
  return request.is(types) !== false;
}

/** A body that is not empty: chunked, or a Content-Length other than 0. */
function hasContent(request: Request): boolean {
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
  );
}

/** What the body parser reads: any declared body, a `Content-Length: 0` one included. */
function declaresBody(request: Request): boolean {
  return (
    request.headers['transfer-encoding'] !== undefined ||
    request.headers['content-length'] !== undefined
  );
}

/** The parts of the request pipeline that live elsewhere, each built once at startup. */
export interface RequestPipelineParts {
  /** Registers the request's log line and metric sample for when the response finishes. */
  observe(request: Request, response: Response): void;
  /** Response headers every answer carries (the security headers). */
  headers: readonly Header[];
  /** True once shutdown has begun. */
  draining(): boolean;
  /** The JSON body parser (limit, accepted types). */
  parseJson: RequestHandler;
}

/**
 * Everything every request passes before routing, in one middleware and in this order:
 * 1. a request id (the caller's `x-request-id` when well-formed, else a UUID), echoed in
 *    `x-request-id` first, so that every answer carries it, errors included;
 * 2. the log line and metric sample of the request, written when the response finishes, so that
 *    requests refused below (400, 413, 415) are logged too;
 * 3. the security headers, and while draining `Connection: close`, which asks keep-alive clients
 *    to reconnect (to another pod) after this response;
 * 4. for a body: 415 unless a POST, PUT or PATCH body is JSON, then the JSON parser (400 for
 *    malformed JSON, 413 over the limit), then 400 for a body nested more than MAX_BODY_DEPTH
 *    levels deep (validation and serialisation recurse, and a few thousand levels would overflow
 *    the stack: a 500). A request without a body skips all of step 4.
 *
 * One function rather than a middleware per step: each Express layer costs a router step per
 * request, and these run on every request (see bench/README.md, "Profile-driven changes").
 */
export function requestPipeline(parts: RequestPipelineParts): RequestHandler {
  const { observe, headers, draining, parseJson } = parts;
  const afterParsing = (request: Request, next: NextFunction) => (error?: unknown) => {
    if (error !== undefined && error !== null) next(error);
    else if (nestedDeeperThan(request.body, MAX_BODY_DEPTH)) {
      next(
        new BadRequestException(`request body is nested more than ${MAX_BODY_DEPTH} levels deep`),
      );
    } else next();
  };
  return (request, response, next) => {
    request.id = requestIdFrom(request.headers['x-request-id']);
    response.setHeader('x-request-id', request.id);
    observe(request, response);
    for (const [name, value] of headers) response.setHeader(name, value);
    if (draining()) response.setHeader('Connection', 'close');
    if (!declaresBody(request)) {
      next();
      return;
    }
    if (BODY_METHODS.has(request.method) && hasContent(request) && !isJsonBody(request)) {
      next(
        new UnsupportedMediaTypeException(
          'request body must be JSON (Content-Type: application/json)',
        ),
      );
      return;
    }
    void parseJson(request, response, afterParsing(request, next));
  };
}
