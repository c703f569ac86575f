import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { routerLayers, type RouterLayer } from '../internals/express-router.js';

/** Nest answers unknown routes from a catch-all route (`{/*splat}`): that is no route of ours. */
const isOurs = (path: unknown): path is string =>
  typeof path === 'string' && path.length > 0 && !path.includes('*');

/**
 * The route that would have served a request refused before routing (413, 415, malformed JSON:
 * the body parser runs first), found in the app's router. Only runs for such refusals.
 */
function declaredRoute(request: Request): string | undefined {
  const method = request.method === 'HEAD' ? 'get' : request.method.toLowerCase();
  for (const layer of routerLayers(request.app)) {
    const path = layer.route?.path;
    if (isOurs(path) && layer.route?.methods?.[method] && matches(layer, request.path)) return path;
  }
  return undefined;
}

/** Whether a layer matches a path; a path with invalid percent-encoding matches none. */
function matches(layer: RouterLayer, path: string): boolean {
  try {
    return Boolean(layer.match(path));
  } catch {
    return false;
  }
}

/** The route template Express matched (`/users/:id`), so logs and metrics group by route. */
export function routeOf(request: IncomingMessage, statusCode: number): string {
  const express = request as Request;
  const route = express.route as { path?: string } | undefined;
  if (isOurs(route?.path)) return `${express.baseUrl ?? ''}${route.path}`;
  // No route: a file from public/ (served before routing), a request refused before routing, or
  // no match at all.
  if (statusCode < 400) return '(static)';
  return declaredRoute(express) ?? '(unmatched)';
}
