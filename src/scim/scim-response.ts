import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AfterHandler } from '../http/after-handler.js';
import type { IfMatch } from '../users/users.service.js';

export const SCIM_MEDIA_TYPE = 'application/scim+json';

interface Described {
  meta?: { version?: string; location?: string };
}

/**
 * A SCIM answer: application/scim+json, the resource's `ETag` (its meta.version), and on a
 * create its `Location`. Handlers return the resource; only this writes the headers.
 */
export function ScimResponse({ created = false } = {}): MethodDecorator {
  return AfterHandler((body, _request, response) => {
    response.type(SCIM_MEDIA_TYPE);
    const meta = (body as Described | undefined)?.meta;
    if (meta?.version) response.setHeader('ETag', meta.version);
    if (created && meta?.location) response.setHeader('Location', meta.location);
    return body;
  });
}

/**
 * If-Match of a SCIM write: undefined without the header, `*`, or the versions of the tags it
 * lists (`W/"3"`; SCIM clients send back the weak tag they were given, so it compares weakly).
 */
export const ScimIfMatch = createParamDecorator(
  (_data: unknown, context: ExecutionContext): IfMatch | undefined => {
    const header = context.switchToHttp().getRequest<Request>().headers['if-match'];
    if (header === undefined) return undefined;
    if (header.trim() === '*') return '*';
    return header
      .split(',')
      .map((tag) => /^\s*(?:W\/)?"([0-9]{1,10})"\s*$/.exec(tag)?.[1])
      .filter((version) => version !== undefined)
      .map(Number);
  },
);
