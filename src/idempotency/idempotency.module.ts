import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { IdempotencyKeyPurge } from './idempotency-key-purge.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';

/** `@Idempotent()` creates: the interceptor, the keys' repository and their purge. */
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyKey])],
  providers: [IdempotencyInterceptor, IdempotencyKeysRepository, IdempotencyKeyPurge],
  exports: [IdempotencyInterceptor, IdempotencyKeysRepository],
})
export class IdempotencyModule {}
