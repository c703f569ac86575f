import type { Request, Response } from 'express';
import { paginationLinks } from './list-query.js';

/** Sets `X-Total-Count` and `Link` on a list response. */
export function setPaginationHeaders(
  request: Request,
  response: Response,
  { page, limit }: { page: number; limit: number },
  total: number,
): void {
  const url = request.originalUrl;
  const queryStart = url.indexOf('?');
  const search = queryStart === -1 ? '' : url.slice(queryStart + 1);
  response.setHeader('X-Total-Count', String(total));
  response.setHeader('Link', paginationLinks(request.path, search, page, limit, total));
}
