import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';

/** Keys are kept IDEMPOTENCY_KEY_TTL_HOURS, then purged every IDEMPOTENCY_PURGE_INTERVAL_MS. */
@Injectable()
export class IdempotencyKeyPurge implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Idempotency');
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const { purgeIntervalMs } = this.config.idempotency;
    if (purgeIntervalMs === 0) return;
    this.timer = setInterval(() => {
      this.purgeExpired().catch((error: unknown) =>
        this.logger.warn({ err: error, msg: 'purge of expired keys failed' }),
      );
    }, purgeIntervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** @returns how many expired keys were deleted */
  async purgeExpired(): Promise<number> {
    const deleted = await this.keys.purgeExpired(this.config.idempotency.ttlHours);
    if (deleted > 0) this.logger.log(`purged ${deleted} expired idempotency keys`);
    return deleted;
  }
}
