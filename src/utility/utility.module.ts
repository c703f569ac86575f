import { Module } from '@nestjs/common';
import { GracefulShutdown } from '../health/graceful-shutdown.js';
import { HealthController } from '../health/health.controller.js';
import { HealthService } from '../health/health.service.js';
import { UtilityController } from './utility.controller.js';

@Module({
  controllers: [HealthController, UtilityController],
  providers: [HealthService, GracefulShutdown],
  exports: [HealthService, GracefulShutdown],
})
export class UtilityModule {}
