import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChangesModule } from '../changes/changes.module.js';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';
import { ListsModule } from '../lists/lists.module.js';
import { User } from './user.entity.js';
import { UsersController } from './users.controller.js';
import { UsersGrpcController } from './users.grpc.controller.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

@Module({
  imports: [ChangesModule, IdempotencyModule, ListsModule, TypeOrmModule.forFeature([User])],
  controllers: [UsersController, UsersGrpcController],
  providers: [UsersService, UsersRepository],
  exports: [UsersService],
})
export class UsersModule {}
