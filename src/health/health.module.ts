import { Module } from '@nestjs/common';
import { GracefulShutdown } from './graceful-shutdown.js';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';
import { SchemaReadiness } from './schema-readiness.js';

/** Liveness and readiness (HTTP and gRPC health), and the graceful shutdown that drives them. */
@Module({
  controllers: [HealthController],
  providers: [HealthService, GracefulShutdown, SchemaReadiness],
  exports: [HealthService, GracefulShutdown],
})
export class HealthModule {}
