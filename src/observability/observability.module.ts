import { Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { AppConfig } from '../config/app-config.js';
import { GrpcObservabilityInterceptor } from './grpc-observability.interceptor.js';
import { createRootLogger, ROOT_LOGGER } from './logging.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';

const rootLogger = {
  provide: ROOT_LOGGER,
  inject: [AppConfig],
  useFactory: (config: AppConfig) => createRootLogger(config),
};

/**
 * Logs (pino through nestjs-pino, which also becomes Nest's own logger) and Prometheus metrics.
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
  controllers: [MetricsController],
  providers: [rootLogger, MetricsService, GrpcObservabilityInterceptor],
  exports: [ROOT_LOGGER, MetricsService, GrpcObservabilityInterceptor],
})
export class ObservabilityModule {}
