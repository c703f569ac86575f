import { Global, Module } from '@nestjs/common';
import { GrpcAuthGuard } from './grpc-auth.guard.js';
import { HttpAuthGuard } from './http-auth.guard.js';
import { TokenVerifierService } from './token-verifier.service.js';

/**
 * Bearer-token authentication (docs/authentication.md). Global, so the guards that
 * `@RequiredScope()` binds in any feature module resolve the one verifier and its caches.
 */
@Global()
@Module({
  providers: [TokenVerifierService, HttpAuthGuard, GrpcAuthGuard],
  exports: [TokenVerifierService, HttpAuthGuard, GrpcAuthGuard],
})
export class AuthModule {}
