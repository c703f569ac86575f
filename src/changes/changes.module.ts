import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { HealthModule } from '../health/health.module.js';
import { ChangesController } from './changes.controller.js';
import { ChangesGrpcController } from './changes.grpc.controller.js';
import { ChangesMetrics } from './changes.metrics.js';
import { ChangesPoller } from './changes-poller.js';
import { ChangesPurge } from './changes-purge.js';
import { ChangesRepository } from './changes.repository.js';
import { ChangesService } from './changes.service.js';
import { UserChange } from './user-change.entity.js';
import { UserChangesWatermark } from './user-changes-watermark.entity.js';

/**
 * The change feed of users (docs/events.md): `GET /users/changes`, gRPC ListUserChanges and
 * WatchUserChanges, the shared poller of long polls and streams, the retention purge and the
 * feed's metrics. UsersModule takes ChangesService for the `Changes-Token` of its list.
 */
@Module({
  imports: [HealthModule, TypeOrmModule.forFeature([UserChange, UserChangesWatermark])],
  controllers: [ChangesController, ChangesGrpcController],
  providers: [ChangesService, ChangesRepository, ChangesPoller, ChangesPurge, ChangesMetrics],
  exports: [ChangesService],
})
export class ChangesModule {}
