import 'reflect-metadata';
import { ConsoleLogger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { grpcOptions } from './grpc/grpc-options.js';
import { AppConfig } from './config/app-config.js';
import { ConfigError } from './config/env.validation.js';

// Every line the process writes is one JSON object, from the first: Nest's own logger in JSON
// mode until configureApp hands logging to pino, and for a boot that fails before that.
const bootLogger = new ConsoleLogger({ json: true });

async function bootstrap(): Promise<void> {
  // The JSON body parser is registered by configureApp, after the request id and the request log.
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    bodyParser: false,
    bufferLogs: true,
    logger: bootLogger,
  });
  configureApp(app);
  app.connectMicroservice(grpcOptions(app));
  // SIGTERM/SIGINT run Nest's shutdown hooks (GracefulShutdown drains first), then exit 0.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  await app.startAllMicroservices();
  const { host, port, grpcPort } = app.get(AppConfig);
  await app.listen(port, host);
  app.get(Logger).log(`HTTP on ${host}:${port}, gRPC on ${host}:${grpcPort}`, 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    // A bad environment is an operator's mistake: name the variables, no stack trace.
    bootLogger.error(error.message, undefined, 'Bootstrap');
  } else {
    bootLogger.error(
      'failed to start',
      error instanceof Error ? error.stack : String(error),
      'Bootstrap',
    );
  }
  process.exit(1);
});
