import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { type Metadata, status } from '@grpc/grpc-js';
import { getRpcInfo } from 'nestjs-pino';
import type { Logger } from 'pino';
import { type Observable, tap } from 'rxjs';
import { toGrpcError } from '../common/grpc-exceptions.filter.js';
import { requestIdFrom } from '../common/request-id.js';
import { ROOT_LOGGER } from './logging.js';
import { MetricsService } from './metrics.service.js';

/** One log line and one metric sample per gRPC call: method, status code, duration, request id. */
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

    const record = (code: status, error?: unknown) => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const codeName = status[code];
      const labels = { grpc_service: service, grpc_method: method, grpc_code: codeName };
      this.metrics.grpcHandled.inc(labels);
      this.metrics.grpcHandlingSeconds.observe(labels, durationMs / 1000);
      const line = {
        requestId,
        grpc: { method: `${service}/${method}`, code: codeName },
        durationMs: Math.round(durationMs * 1000) / 1000,
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
