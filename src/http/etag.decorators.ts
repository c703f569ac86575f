import {
  applyDecorators,
  createParamDecorator,
  type ExecutionContext,
  SetMetadata,
} from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import { AfterHandler, type AfterHandlerStep } from './after-handler.js';
import { matchesIfNoneMatch, parseIfMatch, tagOf } from './etag.js';
import {
  ApiConditionalGet,
  ApiIfMatch,
  CREATED_HEADERS,
  ETAG_HEADER,
} from './openapi.decorators.js';

/** Where a created resource lives, from the body the create returned. */
export type LocationOf<T> = (body: T) => string;

/** The headers that describe a resource: `Location` of a create, and the `ETag` of a tagged body. */
export function resourceHeaders(
  body: unknown,
  location?: LocationOf<unknown>,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (location) headers.Location = location(body);
  const etag = tagOf(body);
  if (etag !== undefined) headers.ETag = etag;
  return headers;
}

/** The names resourceHeaders() may write. */
export const RESOURCE_HEADERS = ['Location', 'ETag'] as const;

const LOCATION_OF = Symbol('locationOf');

/** Where the resource a create handler returns lives (its @Created), if it is one. */
export function locationOf(handler: object): LocationOf<unknown> | undefined {
  return Reflect.getMetadata(LOCATION_OF, handler) as LocationOf<unknown> | undefined;
}

/**
 * Turns what a handler returns into the headers that describe it (resourceHeaders), and for a
 * GET or HEAD whose If-None-Match matches, 304 with no body. Handlers return values; this is the
 * only place these headers are written.
 */
export function describeResource(location?: LocationOf<unknown>): AfterHandlerStep {
  return (body, request, response) => {
    const headers = resourceHeaders(body, location);
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    const etag = headers.ETag;
    if (etag === undefined) return body;
    const read = request.method === 'GET' || request.method === 'HEAD';
    if (!read || !matchesIfNoneMatch(request.headers['if-none-match'], etag)) return body;
    response.status(304);
    return undefined;
  };
}

/** A GET of one tagged resource: ETag, and 304 when If-None-Match matches (documented). */
export function ConditionalGet(type: new () => unknown): MethodDecorator {
  return applyDecorators(ApiConditionalGet(type), AfterHandler(describeResource()));
}

/** A write that If-Match makes conditional and whose answer carries the new ETag. */
export function ConditionalWrite(type: new () => unknown, description: string): MethodDecorator {
  return applyDecorators(
    ApiIfMatch(),
    ApiOkResponse({ type, headers: ETAG_HEADER, description }),
    AfterHandler(describeResource()),
  );
}

/** A create: 201 with `Location` (from the created body) and the new resource's ETag. */
export function Created<T>(type: new () => T, location: LocationOf<T>): MethodDecorator {
  return applyDecorators(
    ApiCreatedResponse({ type, headers: CREATED_HEADERS }),
    SetMetadata(LOCATION_OF, location),
    AfterHandler(describeResource(location as LocationOf<unknown>)),
  );
}

/**
 * The If-Match precondition of a write to the resource whose id is the route's `id` parameter:
 * undefined without the header, `*`, or the versions the caller accepts (see parseIfMatch).
 */
export const IfMatch = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const request = context.switchToHttp().getRequest<Request>();
  return parseIfMatch(request.headers['if-match'], Number(request.params.id));
});
