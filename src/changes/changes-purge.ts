import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ChangesRepository } from './changes.repository.js';

/** Events are kept CHANGES_RETENTION_HOURS, then purged every CHANGES_PURGE_INTERVAL_MS. */
@Injectable()
export class ChangesPurge implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Changes');
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly changes: ChangesRepository,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const { purgeIntervalMs } = this.config.changes;
    if (purgeIntervalMs === 0) return;
    this.timer = setInterval(() => {
      this.purgeExpired().catch((error: unknown) =>
        this.logger.warn(`purge of expired change events failed: ${String(error)}`),
      );
    }, purgeIntervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** @returns how many expired events were deleted */
  async purgeExpired(): Promise<number> {
    const deleted = await this.changes.purgeExpired(this.config.changes.retentionHours);
    if (deleted > 0) this.logger.log(`purged ${deleted} expired change events`);
    return deleted;
  }
}
