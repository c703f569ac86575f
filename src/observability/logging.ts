import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { pino, type Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { activeSpan, traceFields, tracingEnabled } from './tracing.js';

/** Injection token of the service's root pino logger. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

// Wherever these appear in a log object, their values are replaced.
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'apiKeys',
  'password',
];

function prettyAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false; // a dev dependency: absent from the production image
  }
}

/**
 * JSON lines on stdout; pretty output only when a person is watching a terminal (and never in
 * production). Level names, ISO timestamps and `service` on every line; with tracing on, also
 * `trace_id` and `span_id` of the span running when the line is written (no mixin when off, so
 * no cost per line).
 */
export function createRootLogger(config: Pick<AppConfig, 'logLevel' | 'production'>): Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    base: { service: 'users-service' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    ...(tracingEnabled() && { mixin: () => traceFields(activeSpan()) }),
  };
  if (process.stdout.isTTY && !config.production && prettyAvailable()) {
    return pino({
      ...options,
      transport: {
        target: 'pino-pretty',
        options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' },
      },
    });
  }
  // Asynchronous writes keep logging off the request path; each line still goes out at once.
  return pino(options, pino.destination({ dest: 1, sync: false }));
}

interface RouterLayer {
  route?: { path?: unknown; methods?: Record<string, boolean> };
  match(path: string): boolean;
}

/** Nest answers unknown routes from a catch-all route (`{/*splat}`): that is no route of ours. */
const isOurs = (path: unknown): path is string =>
  typeof path === 'string' && path.length > 0 && !path.includes('*');

/**
 * The route that would have served a request refused before routing (413, 415, malformed JSON:
 * the body parser runs first), found in the app's router. Only runs for such refusals.
 */
function declaredRoute(request: Request): string | undefined {
  const app = request.app as unknown as { router?: { stack?: RouterLayer[] } } | undefined;
  const router = app?.router;
  const method = request.method === 'HEAD' ? 'get' : request.method.toLowerCase();
  for (const layer of router?.stack ?? []) {
    const path = layer.route?.path;
    if (isOurs(path) && layer.route?.methods?.[method] && matches(layer, request.path)) return path;
  }
  return undefined;
}

/** Whether a layer matches a path; a path with invalid percent-encoding matches none. */
function matches(layer: RouterLayer, path: string): boolean {
  try {
    return layer.match(path);
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
