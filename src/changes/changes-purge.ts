import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ChangesRepository } from './changes.repository.js';

/**
 * Deletes events older than CHANGES_RETENTION_HOURS, every CHANGES_PURGE_INTERVAL_MS (0: never)
 * counted from the end of the previous run, so a long purge never overlaps the next one. Every
 * replica purges, one at a time: a batch that finds another replica's at work deletes nothing,
 * and the run ends until the next interval (ChangesRepository.purgeExpired).
 */
@Injectable()
export class ChangesPurge implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Changes');
  private nextRun?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly config: AppConfig,
    private readonly changes: ChangesRepository,
  ) {}

  onModuleInit(): void {
    this.scheduleNext();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.nextRun);
  }

  /** @returns how many expired events were deleted */
  async purgeExpired(): Promise<number> {
    const deleted = await this.changes.purgeExpired(this.config.changes.retentionHours);
    if (deleted > 0) this.logger.log(`purged ${deleted} expired change events`);
    return deleted;
  }

  private scheduleNext(): void {
    const { purgeIntervalMs } = this.config.changes;
    if (purgeIntervalMs === 0 || this.stopped) return;
    this.nextRun = setTimeout(() => {
      this.purgeExpired()
        .catch((error: unknown) =>
          this.logger.warn(`purging change events failed: ${String(error)}`),
        )
        .finally(() => this.scheduleNext());
    }, purgeIntervalMs);
    this.nextRun.unref();
  }
}
