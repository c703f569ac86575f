import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { httpLoggerOptions, routeOf } from './logging.js';
import type { MetricsService } from './metrics.service.js';

/**
 * Express middleware, mounted before the body parser so that every request is logged and measured,
 * requests rejected while parsing (400, 413, 415) included.
 */
export function httpObservability(
  logger: Logger,
  metrics: MetricsService,
): (request: Request, response: Response, next: NextFunction) => void {
  const log = pinoHttp(httpLoggerOptions(logger));
  return (request, response, next) => {
    const stop = metrics.httpRequestDuration.startTimer();
    response.once('finish', () => {
      stop({
        method: request.method,
        route: routeOf(request, response.statusCode),
        status: String(response.statusCode),
      });
    });
    log(request, response, next);
  };
}
