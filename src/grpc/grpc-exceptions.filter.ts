import {
  type ArgumentsHost,
  Catch,
  HttpException,
  Logger,
  type RpcExceptionFilter,
} from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { status } from '@grpc/grpc-js';
import { type Observable, throwError } from 'rxjs';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { errorKindOf } from '../common/errors.js';

export interface GrpcError {
  code: status;
  message: string;
}

const HTTP_TO_GRPC: Record<number, status> = {
  400: status.INVALID_ARGUMENT,
  401: status.UNAUTHENTICATED,
  403: status.PERMISSION_DENIED,
  404: status.NOT_FOUND,
  409: status.ALREADY_EXISTS,
  413: status.RESOURCE_EXHAUSTED,
  429: status.RESOURCE_EXHAUSTED,
  503: status.UNAVAILABLE,
  504: status.DEADLINE_EXCEEDED,
};

/** Maps anything a gRPC handler throws to a status code and a message with no internals. */
export function toGrpcError(exception: unknown): GrpcError {
  const kind = errorKindOf(exception);
  if (kind) return { code: kind.grpcCode, message: (exception as Error).message };
  if (isDatabaseUnavailable(exception))
    return { code: status.UNAVAILABLE, message: 'service unavailable' };
  if (exception instanceof HttpException) {
    const code = HTTP_TO_GRPC[exception.getStatus()] ?? status.INTERNAL;
    return { code, message: code === status.INTERNAL ? 'internal error' : exception.message };
  }
  if (exception instanceof RpcException) {
    const error = exception.getError();
    if (typeof error === 'object' && error !== null && 'code' in error) {
      const { code, message } = error as { code: status; message?: string };
      return { code, message: message ?? exception.message };
    }
  }
  return { code: status.INTERNAL, message: 'internal error' };
}

/**
 * The gRPC counterpart of AllExceptionsFilter. It emits a plain `{code, message}`, which Nest's
 * gRPC server hands to grpc-js as the call's status; an unmapped error would reach clients as
 * UNKNOWN with its message. An RpcException carries its status already (a handler's own, or one
 * the call's observer mapped and logged): it is passed on as it is, not mapped or logged again.
 */
@Catch()
export class GrpcExceptionsFilter implements RpcExceptionFilter<unknown> {
  private readonly logger = new Logger('gRPC');

  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => this.statusOf(exception));
  }

  /** The status the call ends with; an error the call's observer did not map is logged here. */
  statusOf(exception: unknown): GrpcError {
    const error = toGrpcError(exception);
    if (exception instanceof RpcException) return error;
    // The error as the root logger reduces it: no SQL, parameters or row data.
    if (error.code === status.INTERNAL) {
      this.logger.error({ err: exception, msg: 'call failed' });
    } else if (error.code === status.UNAVAILABLE) {
      this.logger.warn({ err: exception, msg: 'database unavailable' });
    }
    return error;
  }
}
