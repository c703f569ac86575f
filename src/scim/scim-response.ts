import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AfterHandler } from '../http/after-handler.js';
import type { IfMatch } from '../users/users.service.js';

export const SCIM_MEDIA_TYPE = 'application/scim+json';

interface Described {
  meta?: { version?: string; location?: string };
}

/** Whether a request names the attributes to return (`attributes` or `excludedAttributes`). */
export const asksForAttributes = (query: Record<string, unknown>) =>
  query.attributes !== undefined || query.excludedAttributes !== undefined;

/**
 * A SCIM answer: application/scim+json, the resource's `ETag` (its meta.version), and on a
 * create its `Location`. Handlers return the resource; only this writes the headers. With
 * `noContent`, the answer is 204 and the ETag alone unless the request asks for attributes
 * (RFC 7644 §3.5.2 allows either): a group's PATCH then costs no read of its members.
 */
export function ScimResponse({ created = false, noContent = false } = {}): MethodDecorator {
  return AfterHandler((body, request, response) => {
    const meta = (body as Described | undefined)?.meta;
    if (meta?.version) response.setHeader('ETag', meta.version);
    if (noContent && !asksForAttributes(request.query)) {
      response.status(204);
      return undefined;
    }
    response.type(SCIM_MEDIA_TYPE);
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
