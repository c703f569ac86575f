import { Module } from '@nestjs/common';
import { HealthModule } from '../health/health.module.js';
import { UtilityController } from './utility.controller.js';

/** The utility routes: /health and /health/ready (HealthModule), /echo, /info and /private. */
@Module({
  imports: [HealthModule],
  controllers: [UtilityController],
  exports: [HealthModule],
})
export class UtilityModule {}
