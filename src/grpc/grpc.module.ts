import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DirectGrpcMethods } from './direct-grpc-methods.js';

/** The gRPC transport's own providers: the direct methods AppGrpcServer answers (grpc-options.ts). */
@Module({
  imports: [DiscoveryModule],
  providers: [DirectGrpcMethods],
  exports: [DirectGrpcMethods],
})
export class GrpcModule {}
