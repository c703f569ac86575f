import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { Metadata, type ServerUnaryCall, status } from '@grpc/grpc-js';
import { getRpcInfo } from 'nestjs-pino';
import type { Logger } from 'pino';
import { type Observable, tap } from 'rxjs';
import { toGrpcError } from './grpc-exceptions.filter.js';
import { requestIdFrom } from '../common/request-id.js';
import { callerOf } from '../observability/caller.js';
import { ROOT_LOGGER } from '../observability/logging.js';
import { MetricsService } from '../observability/metrics.service.js';
import { activeSpan } from '../observability/tracing.js';

/**
 * One log line and one metric sample per gRPC call: method, status code, duration, request id.
 * The request id goes back in the response metadata (`x-request-id`), as HTTP sends it back in a
 * header, and onto the call's span when tracing is on.
 */
@Injectable()
export class GrpcObservabilityInterceptor implements NestInterceptor {
  constructor(
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    private readonly metrics: MetricsService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const started = process.hrtime.bigint();
    // @GrpcMethod('Users', 'GetUser') registers the pattern { service, rpc }.
    const pattern = getRpcInfo(context).pattern as { service?: string; rpc?: string } | undefined;
    const service = `users.${pattern?.service ?? 'unknown'}`;
    const method = pattern?.rpc ?? context.getHandler().name;
    const metadata = context.switchToRpc().getContext<Metadata>();
    const requestId = requestIdFrom(metadata?.get?.('x-request-id')[0]);
    // Nest calls a gRPC handler with (request, metadata, call).
    const call = context.getArgByIndex<unknown>(2);
    // The instrumentation names it `grpc.users.Users/GetUser`; the method's full name is the norm.
    // (The call's log line gets trace_id and span_id from the logger's mixin: it runs in the span.)
    activeSpan()?.updateName(`${service}/${method}`).setAttribute('rpc.request_id', requestId);

    const record = (code: status, error?: unknown) => {
      // The request id goes out with the answer (in the same write as the message or the status,
      // where sending it before the query would cost a frame and a write of its own).
      if (isUnaryCall(call)) {
        const headers = new Metadata();
        headers.set('x-request-id', requestId);
        call.sendMetadata(headers);
      }
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const codeName = status[code];
      const labels = { grpc_service: service, grpc_method: method, grpc_code: codeName };
      this.metrics.grpcHandled.inc(labels);
      this.metrics.grpcHandlingSeconds.observe(labels, durationMs / 1000);
      const line = {
        requestId,
        grpc: { method: `${service}/${method}`, code: codeName },
        durationMs: Math.round(durationMs * 1000) / 1000,
        auth: typeof call === 'object' && call !== null ? callerOf(call) : undefined,
      };
      const message = `gRPC ${service}/${method} ${codeName}`;
      if (code === status.INTERNAL || code === status.UNKNOWN)
        this.logger.error({ ...line, err: error }, message);
      else this.logger.info(line, message);
    };
    return next.handle().pipe(
      tap({
        next: () => record(status.OK),
        error: (error: unknown) => record(toGrpcError(error).code, error),
      }),
    );
  }
}

function isUnaryCall(call: unknown): call is ServerUnaryCall<unknown, unknown> {
  return typeof (call as { sendMetadata?: unknown } | undefined)?.sendMetadata === 'function';
}
