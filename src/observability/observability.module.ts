import {
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { AppConfig } from '../config/app-config.js';
import { createRootLogger, ROOT_LOGGER } from './logging.js';
import { MetricsServer } from './metrics-server.js';
import { MetricsService } from './metrics.service.js';
import { shutdownTracing, tracingStatus } from './tracing.js';

const rootLogger = {
  provide: ROOT_LOGGER,
  inject: [AppConfig],
  useFactory: (config: AppConfig) => createRootLogger(config),
};

/**
 * Says at boot whether spans are exported, and flushes them at shutdown: Nest runs this hook
 * before main.ts's useProcessExit ends the process, so the last requests' spans are sent.
 */
@Injectable()
export class TracingLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(ROOT_LOGGER) private readonly logger: Logger) {}

  onModuleInit(): void {
    this.logger.info({ context: 'Tracing' }, `tracing ${tracingStatus()}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await shutdownTracing();
  }
}

/**
 * Logs (pino through nestjs-pino, which also becomes Nest's own logger) and Prometheus metrics
 * (served on METRICS_PORT by MetricsServer); the gRPC methods' call lines and samples come from
 * GrpcObservability (src/grpc/), provided by the module whose controller it observes.
 * The HTTP request logger is mounted by configureApp, before the body parser.
 */
@Global()
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [ROOT_LOGGER],
      // nestjs-pino is Nest's logger here; the per-request line comes from httpObservability.
      // No nestjs-pino request middleware (forRoutes: []): its AsyncLocalStorage.run on every
      // request would turn on promise hooks for all of them.
      useFactory: (logger: Logger) => ({ pinoHttp: { logger }, useExisting: true, forRoutes: [] }),
    }),
  ],
  providers: [rootLogger, MetricsService, MetricsServer, TracingLifecycle],
  exports: [ROOT_LOGGER, MetricsService, MetricsServer],
})
export class ObservabilityModule {}
