import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
  type Type,
  type OnModuleInit,
} from '@nestjs/common';
import { LoggerModule, type Params } from 'nestjs-pino';
import type { Logger } from 'pino';
import { AppConfig } from '../config/app-config.js';
import { createRootLogger, ROOT_LOGGER } from './logging.js';
import { MetricsServer } from './metrics-server.js';
import { MetricsService } from './metrics.service.js';
import { shutdownTracing, tracingStatus } from './tracing.js';
import { WalArchiveMetrics } from './wal-archive.metrics.js';

/**
 * nestjs-pino's settings: it is Nest's logger here, writing through the root logger; the
 * per-request line comes from httpObservability. No nestjs-pino request middleware
 * (forRoutes: []): its AsyncLocalStorage.run on every request would turn on promise hooks for all
 * of them. wrapSerializers: false keeps the root logger's `err` serializer (the loggable form of
 * errors) rather than pino-http's. main.ts builds Nest's boot logger with the same settings.
 */
export function nestLoggerParams(logger: Logger): Params {
  return { pinoHttp: { logger, wrapSerializers: false }, useExisting: true, forRoutes: [] };
}

/** The root logger main.ts made before Nest started (see withRootLogger). */
const PROCESS_LOGGER = Symbol('PROCESS_LOGGER');

/** The process's root logger when main.ts made one, else one made from AppConfig (tests, tools). */
const rootLogger = {
  provide: ROOT_LOGGER,
  inject: [AppConfig, { token: PROCESS_LOGGER, optional: true }],
  useFactory: (config: AppConfig, processLogger?: Logger) =>
    processLogger ?? createRootLogger(config),
};

@Module({})
class ProcessLoggerModule {}

/**
 * `module` with `logger` as its ROOT_LOGGER: main.ts makes the root logger before Nest starts, so
 * that Nest's own boot lines and the modules' lines go through one logger, one schema and one
 * output stream from the first line.
 */
export function withRootLogger(module: Type, logger: Logger): DynamicModule {
  return {
    module,
    imports: [
      {
        module: ProcessLoggerModule,
        global: true,
        providers: [{ provide: PROCESS_LOGGER, useValue: logger }],
        exports: [PROCESS_LOGGER],
      },
    ],
  };
}

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
 * GrpcObservability (src/grpc/), provided by AuthModule, whose gRPC guard records refused calls.
 * The HTTP request logger is mounted by configureApp, before the body parser.
 */
@Global()
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [ROOT_LOGGER],
      useFactory: nestLoggerParams,
    }),
  ],
  providers: [rootLogger, MetricsService, MetricsServer, TracingLifecycle, WalArchiveMetrics],
  exports: [ROOT_LOGGER, MetricsService, MetricsServer],
})
export class ObservabilityModule {}
