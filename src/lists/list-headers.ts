import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { AfterHandler, type AfterHandlerStep } from '../http/after-handler.js';
import type { ListPage } from './list-plan.js';

export const PAGE_HEADERS = {
  'X-Total-Count': { description: 'rows matching the filter', schema: { type: 'integer' } },
  Link: {
    description:
      'RFC 8288 links. Page mode: first, prev, next, last. Cursor mode: first, and next while rows follow',
    schema: { type: 'string' },
  },
};

/**
 * Answers a list handler's ListPage with its items as the body, the total as `X-Total-Count` and
 * the RFC 8288 `Link` header: relative URLs that keep the request's other query parameters.
 */
export const listHeaders: AfterHandlerStep = (result, request, response) => {
  const { items, total, nextCursor, page, limit, changesToken } = result as ListPage<unknown>;
  const url = request.originalUrl;
  const queryStart = url.indexOf('?');
  const search = queryStart === -1 ? '' : url.slice(queryStart + 1);
  response.setHeader('X-Total-Count', String(total));
  if (changesToken !== undefined) response.setHeader('Changes-Token', changesToken);
  response.setHeader(
    'Link',
    page === undefined
      ? cursorLinks(request.path, search, nextCursor)
      : pageLinks(request.path, search, page, limit!, total),
  );
  return items;
};

/** `Changes-Token`: the list's place in a change feed (the users list). */
export const CHANGES_TOKEN_HEADER = {
  'Changes-Token': {
    description:
      'the change feed token taken before the list was read: follow GET /users/changes?after=<it> to miss no change made since (docs/events.md)',
    schema: { type: 'string' },
  },
};

/**
 * A list route: its handler returns a ListPage of `type`; the body is the items (documented).
 * `headers`: what the route adds to the page headers (CHANGES_TOKEN_HEADER).
 */
export function Listed(type: new () => unknown, headers = {}): MethodDecorator {
  return applyDecorators(
    ApiOkResponse({ type: [type], headers: { ...PAGE_HEADERS, ...headers } }),
    AfterHandler(listHeaders),
  );
}

/**
 * The RFC 8288 `Link` header of one page in page mode: relative URLs that keep the request's other
 * query parameters. `first` and `last` always; `prev` except on page 1; `next` before the last.
 */
export function pageLinks(
  path: string,
  search: string,
  page: number,
  limit: number,
  total: number,
): string {
  const last = Math.max(1, Math.ceil(total / limit));
  const link = (target: number, rel: string) => linkTo(path, search, 'page', String(target), rel);
  const links = [link(1, 'first')];
  if (page > 1) links.push(link(Math.min(page - 1, last), 'prev'));
  if (page < last) links.push(link(page + 1, 'next'));
  links.push(link(last, 'last'));
  return links.join(', ');
}

/** The `Link` header in cursor mode: `first` (the empty cursor) always, `next` when rows follow. */
export function cursorLinks(path: string, search: string, next: string | undefined): string {
  const links = [linkTo(path, search, 'cursor', '', 'first')];
  if (next !== undefined) links.push(linkTo(path, search, 'cursor', next, 'next'));
  return links.join(', ');
}

function linkTo(path: string, search: string, name: string, value: string, rel: string): string {
  const params = new URLSearchParams(search);
  params.set(name, value);
  return `<${path}?${params.toString()}>; rel="${rel}"`;
}
