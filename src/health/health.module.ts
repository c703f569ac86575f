import { Module } from '@nestjs/common';
import { GracefulShutdown } from './graceful-shutdown.js';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';
import { ProbeRoutes } from './probe-routes.js';
import { SchemaReadiness } from './schema-readiness.js';

/**
 * Liveness and readiness (HTTP, on the API and metrics ports, and gRPC health), and the graceful
 * shutdown that drives them.
 */
@Module({
  controllers: [HealthController],
  providers: [HealthService, GracefulShutdown, SchemaReadiness, ProbeRoutes],
  exports: [HealthService, GracefulShutdown],
})
export class HealthModule {}
