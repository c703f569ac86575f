import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';
import { UtilityController } from './utility.controller.js';

@Module({
  controllers: [HealthController, UtilityController],
  providers: [HealthService],
  exports: [HealthService],
})
export class UtilityModule {}
