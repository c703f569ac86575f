import type { Request, Response } from 'express';
import type { Level, Logger } from 'pino';
import { callerOf } from './caller.js';
import { routeOf } from './route.js';
import type { MetricsService } from './metrics.service.js';
import { activeSpan, traceFields } from './tracing.js';

const QUIET_PATHS = new Set(['/health', '/health/ready']);

/** The status of a request whose caller closed the connection before its answer was sent. */
export const CLIENT_CLOSED_REQUEST = 499;

/** The route of a request turned away before routing: under `/users`, which the SLIs select. */
const SHED_USERS_ROUTE = '/users/(shed)';
/** The route of a request turned away before routing, anywhere else. */
const SHED_ROUTE = '(shed)';

/**
 * 5xx are errors, except a probe's: readiness answers 503 by design while the database is away
 * (HealthService logs that once, as a warning) and during a planned drain, when it is news, not a
 * fault. Probes and scrapes are otherwise debug.
 */
function levelOf(path: string, status: number, draining: () => boolean): Level {
  if (!QUIET_PATHS.has(path)) return status >= 500 ? 'error' : 'info';
  if (status < 500) return 'debug';
  return draining() ? 'info' : 'warn';
}

/**
 * One log line and one metric sample per HTTP request, written when the response closes:
 * method, path (no query string), route template, status, duration, request id and, with
 * authentication on, the caller (`auth.sub`, `auth.clientId`) or why it was refused. Probes and
 * scrapes log at debug. Called by the request pipeline before the body parser, so requests
 * rejected while parsing (400, 413, 415) are logged too. A request whose caller left before its
 * answer was sent is recorded with status 499 (nginx's "client closed request"): it never
 * finishes, and would otherwise be in neither the logs nor the SLIs.
 *
 * Deliberately a single `finish` listener rather than pino-http: no child logger and no
 * serializers per request (this runs on every request; see bench/README.md).
 */
export function httpObservability(
  logger: Logger,
  metrics: MetricsService,
  draining: () => boolean,
): (request: Request, response: Response) => void {
  // The line's fields are fixed and hold no header, cookie or key: nothing for the root logger's
  // redaction to find, which would otherwise copy its `req` to look (a third of the line's cost).
  // The context is a binding, serialized once here rather than per line.
  const lines = logger.child({ context: 'HTTP' }, { redact: { paths: [] } });
  return (request, response) => {
    const started = process.hrtime.bigint();
    // The SERVER span has ended when 'close' reaches this listener: keep its ids from now.
    const span = activeSpan();
    span?.setAttribute('http.request_id', request.id);
    response.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = response.writableFinished ? response.statusCode : CLIENT_CLOSED_REQUEST;
      const route = routeOf(request, status);
      metrics.httpRequestDuration.observe(
        { method: request.method, route, status: String(status) },
        seconds,
      );
      const level = levelOf(request.path, status, draining);
      if (!lines.isLevelEnabled(level)) return;
      lines[level](
        {
          requestId: request.id,
          req: { method: request.method, path: request.path },
          res: { statusCode: status },
          route,
          durationMs: Math.round(seconds * 1e6) / 1e3,
          auth: callerOf(request),
          ...(span && traceFields(span)),
        },
        `${request.method} ${route} ${status}`,
      );
    });
  };
}

/**
 * Records the requests admission turns away (src/overload/) in http_request_duration_seconds,
 * as their callers saw them: status 503, or 499 when the caller had left. They never reach the
 * router, so their route is `/users/(shed)` for a path under `/users` (the SLIs count it) and
 * `(shed)` elsewhere. No log line: overload_rejected_total counts them by reason, and a flood
 * would log thousands a second. One metric child per method, route and status, found once.
 */
export function shedRequestRecorder(
  metrics: MetricsService,
): (method: string, path: string, status: number, seconds: number) => void {
  const children = new Map<string, { observe(seconds: number): void }>();
  return (method, path, status, seconds) => {
    const route = path === '/users' || path.startsWith('/users/') ? SHED_USERS_ROUTE : SHED_ROUTE;
    const key = `${method} ${route} ${status}`;
    let child = children.get(key);
    if (!child) {
      child = metrics.httpRequestDuration.labels({ method, route, status: String(status) });
      children.set(key, child);
    }
    child.observe(seconds);
  };
}
