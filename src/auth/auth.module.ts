import { Global, Module } from '@nestjs/common';
import { GrpcObservability } from '../grpc/grpc-observability.js';
import { GrpcAuthGuard } from './grpc-auth.guard.js';
import { HttpAuthGuard } from './http-auth.guard.js';
import { TokenVerifierService } from './token-verifier.service.js';

/**
 * Bearer-token authentication (docs/authentication.md). Global, so the guards that
 * `@RequiredScope()` binds in any feature module resolve the one verifier and its caches, and
 * the one GrpcObservability, through which the gRPC guard and controllers record every call.
 */
@Global()
@Module({
  providers: [TokenVerifierService, HttpAuthGuard, GrpcAuthGuard, GrpcObservability],
  exports: [TokenVerifierService, HttpAuthGuard, GrpcAuthGuard, GrpcObservability],
})
export class AuthModule {}
