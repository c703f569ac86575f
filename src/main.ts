import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger, PinoLogger } from 'nestjs-pino';
import type { Logger as RootLogger } from 'pino';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { grpcOptions } from './grpc/grpc-options.js';
import { AppConfig, loadEnv } from './config/app-config.js';
import { ConfigError } from './config/env.validation.js';
import { createRootLogger, logProcessFailures } from './observability/logging.js';
import { nestLoggerParams, withRootLogger } from './observability/observability.module.js';

const LISTEN_BACKLOG = 4096;

/**
 * Every line the process writes is one JSON object of one schema, stamped when it is written:
 * the root logger is made first, from the validated environment, and Nest logs through it from
 * its first line (no buffering until the app is up). The modules use the same logger.
 */
async function bootstrap(logger: RootLogger): Promise<void> {
  // The JSON body parser is registered by configureApp, after the request id and the request log.
  const app = await NestFactory.create<NestExpressApplication>(withRootLogger(AppModule, logger), {
    bodyParser: false,
    logger: new Logger(new PinoLogger(nestLoggerParams(logger)), {}),
  });
  configureApp(app);
  app.connectMicroservice(grpcOptions(app));
  // SIGTERM/SIGINT run Nest's shutdown hooks (GracefulShutdown drains first), then exit 0.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  await app.startAllMicroservices();
  const { host, port, grpcPort } = app.get(AppConfig);
  // A spike's new connections wait in the kernel's accept queue, not dropped SYNs that the caller
  // (or the kubelet's probe) would resend only a second later: Node's default backlog is 511.
  // Nest hands the arguments after the port to http.Server.listen; its types name only the host.
  const listen = app.listen.bind(app) as unknown as (
    port: number,
    host: string,
    backlog: number,
  ) => unknown;
  await listen(port, host, LISTEN_BACKLOG);
  app.get(Logger).log(`HTTP on ${host}:${port}, gRPC on ${host}:${grpcPort}`, 'Bootstrap');
  // The boot's lines are on stdout before the first request is read (log lines otherwise wait
  // up to ChunkedStdout's HOLD_MS).
  logger.flush();
}

/** A boot that failed outside Nest (Nest logs its own failures, then exits 1). */
function failed(logger: RootLogger, error: unknown): never {
  if (error instanceof ConfigError) {
    // A bad environment is an operator's mistake: name the variables, no stack trace.
    logger.error({ context: 'Bootstrap' }, error.message);
  } else {
    logger.error({ context: 'Bootstrap', err: error }, 'failed to start');
  }
  // Lines still buffered are written when the process exits.
  process.exit(1);
}

// Validated here for the logger's settings, before anything else runs (AppConfigModule reads the
// same environment again for the modules, with the same result).
let config: AppConfig;
try {
  config = AppConfig.fromEnv(loadEnv());
} catch (error) {
  // LOG_LEVEL may be the bad variable itself: this line is written with the defaults.
  failed(createRootLogger({ logLevel: 'info', production: true }), error);
}
const logger = createRootLogger(config);
logProcessFailures(logger);
bootstrap(logger).catch((error: unknown) => failed(logger, error));
