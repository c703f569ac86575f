import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { errorKindOf } from '../common/errors.js';
import { routeOf } from '../observability/route.js';

export interface ErrorBody {
  error: string;
  details?: string[];
}

export interface HttpError {
  status: number;
  body: ErrorBody;
}

export const INTERNAL_ERROR: ErrorBody = { error: 'internal server error' };
export const SERVICE_UNAVAILABLE: ErrorBody = { error: 'service unavailable' };

/** What body-parser and Express attach to the errors Nest wraps into HttpExceptions. */
interface ParserCause {
  type?: string;
  limit?: number;
}

// The texts of errors that come from body-parser and the router, which are aimed at developers
// ("Unexpected token } in JSON at position 12") or echo internals.
const PARSER_MESSAGES: Record<string, (cause: ParserCause) => string> = {
  'entity.parse.failed': () => 'request body is not valid JSON',
  'entity.too.large': (cause) => `request body is larger than the limit of ${cause.limit} bytes`,
  'encoding.unsupported': () => 'request body has an unsupported content encoding',
  'charset.unsupported': () => 'request body must be encoded as UTF-8',
  'request.aborted': () => 'request body was not received completely',
  'request.size.invalid': () => 'request body length does not match its Content-Length',
};

// Used when an HttpException carries only its status text ("Bad Request"), which tells a person
// nothing they can act on.
const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'the request is invalid',
  401: 'authentication is required',
  403: 'access to this resource is denied',
  404: 'no such resource',
  405: 'method not allowed on this resource',
  406: 'no acceptable representation: this API answers application/json',
  408: 'the request took too long to arrive',
  409: 'the request conflicts with the current state of the resource',
  413: 'request body is too large',
  415: 'request body must be JSON (Content-Type: application/json)',
  429: 'too many requests',
};

function messageOf(
  exception: HttpException,
  request?: Pick<Request, 'method' | 'path'>,
): ErrorBody {
  const cause = exception.cause as ParserCause | undefined;
  const parserMessage = cause?.type ? PARSER_MESSAGES[cause.type] : undefined;
  if (parserMessage) return { error: parserMessage(cause!) };
  if (exception.cause instanceof URIError)
    return { error: 'request path has invalid percent-encoding' };

  const response = exception.getResponse();
  const message =
    typeof response === 'string' ? response : (response as { message?: unknown }).message;
  // ValidationPipe reports one message per failed rule.
  if (Array.isArray(message)) {
    const details = message.map(String);
    return { error: `invalid request: ${details.join('; ')}`, details };
  }
  // Nest's route-not-found exception ("Cannot GET /x?y=1") echoes the raw URL.
  if (
    exception.getStatus() === 404 &&
    typeof message === 'string' &&
    message.startsWith('Cannot ')
  ) {
    return { error: request ? `no route for ${request.method} ${request.path}` : 'no such route' };
  }
  const status = exception.getStatus();
  const statusText = HttpStatus[status]?.replace(/_/g, ' ').toLowerCase();
  const text = typeof message === 'string' ? message : exception.message;
  if (!text || text.toLowerCase() === statusText) {
    return { error: DEFAULT_MESSAGES[status] ?? `the request failed with status ${status}` };
  }
  return { error: text };
}

/**
 * Maps anything thrown while serving an HTTP request to a status and an `{"error": …}` body.
 * Only HttpExceptions and the service's own errors speak to the client; every other error is
 * an internal one whose message (which may hold SQL or paths) is never returned.
 */
export function toHttpError(
  exception: unknown,
  request?: Pick<Request, 'method' | 'path'>,
): HttpError {
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status >= 500) {
      return { status, body: status === 503 ? SERVICE_UNAVAILABLE : INTERNAL_ERROR };
    }
    return { status, body: messageOf(exception, request) };
  }
  const kind = errorKindOf(exception);
  if (kind) return { status: kind.httpStatus, body: { error: (exception as Error).message } };
  if (isDatabaseUnavailable(exception)) {
    return { status: HttpStatus.SERVICE_UNAVAILABLE, body: SERVICE_UNAVAILABLE };
  }
  return { status: HttpStatus.INTERNAL_SERVER_ERROR, body: INTERNAL_ERROR };
}

@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const { status, body } = this.toError(exception, request);

    // With the request id, so the line joins the request's other lines; the route template
    // rather than the path, and the error as the root logger reduces it (no SQL, parameters or
    // row data: src/observability/loggable-error.ts).
    if (status >= 500) {
      const route = routeOf(request, status);
      const line = { requestId: request.id, route, err: exception };
      if (status === 503) {
        this.logger.warn({ ...line, msg: `${request.method} ${route}: database unavailable` });
      } else {
        this.logger.error({ ...line, msg: `${request.method} ${route} failed` });
      }
    }
    if (response.headersSent) {
      response.end();
      return;
    }
    response.status(status).type(this.mediaTypeOf(request)).json(body);
  }

  /** The media type of error bodies (a subclass speaking another dialect changes both). */
  protected mediaTypeOf(_request: Request): string {
    return 'application/json';
  }

  /** The status and body of an exception: `{"error": …}` (a subclass answers another shape). */
  protected toError(exception: unknown, request: Request): { status: number; body: object } {
    return toHttpError(exception, request);
  }
}
