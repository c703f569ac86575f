import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp, grpcOptions } from './app.setup.js';
import { AppConfig } from './config/app-config.js';
import { ConfigError } from './config/env.validation.js';

async function bootstrap(): Promise<void> {
  // The JSON body parser is registered by configureApp, after the request id and the request log.
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    bodyParser: false,
    bufferLogs: true,
  });
  configureApp(app);
  app.connectMicroservice(grpcOptions(app));
  // SIGTERM/SIGINT run Nest's shutdown hooks (GracefulShutdown drains first), then exit 0.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  await app.startAllMicroservices();
  const { host, port, grpcPort } = app.get(AppConfig);
  await app.listen(port, host);
  new Logger('Bootstrap').log(`HTTP on ${host}:${port}, gRPC on ${host}:${grpcPort}`);
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    // A bad environment is an operator's mistake: name the variables, no stack trace.
    console.error(error.message);
  } else {
    new Logger('Bootstrap').error(
      'failed to start',
      error instanceof Error ? error.stack : String(error),
    );
  }
  process.exit(1);
});
