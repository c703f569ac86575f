import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { GracefulShutdown } from '../health/graceful-shutdown.js';
import { type FeedKey, isAfter } from './change-token.js';
import { ChangesRepository } from './changes.repository.js';

interface Waiter {
  after: FeedKey;
  /** Polls started before this waiter came: only a later one can tell it something new. */
  since: number;
  settle(found: boolean): void;
}

/**
 * The one watcher of the feed in this process, for every long poll and watch stream waiting on
 * it: while anyone waits, one query every CHANGES_POLL_INTERVAL_MS reads the newest event a
 * reader can see, and wakes the waiters it lies after. So a thousand waiting clients cost the
 * database what one does. (LISTEN/NOTIFY would wake them sooner, but needs a session of its own,
 * which PgBouncer's transaction pooling does not keep: docs/events.md.)
 *
 * At the end of the shutdown drain every waiter is let go and later waits return at once: long
 * polls answer their page and watch streams end, so clients reconnect to another instance before
 * this one stops accepting.
 */
@Injectable()
export class ChangesPoller implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Changes');
  private readonly waiters = new Set<Waiter>();
  private timer?: NodeJS.Timeout;
  private polling = false;
  private polls = 0;
  private failing = false;
  private closed = false;

  constructor(
    private readonly changes: ChangesRepository,
    private readonly config: AppConfig,
    private readonly shutdown: GracefulShutdown,
  ) {}

  onModuleInit(): void {
    this.shutdown.onDrained(() => this.close());
  }

  onApplicationShutdown(): void {
    this.close();
  }

  /** How many long polls and streams wait now. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Whether the drain is over: waits return at once. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Resolves true once an event after `after` is visible (as far as a poll can tell: the caller
   * reads to know), false after `ms`, when `signal` aborts (the client went away), or when the
   * process drains.
   */
  wait(after: FeedKey, ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.closed || ms <= 0 || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const abort = () => waiter.settle(false);
      const timeout = setTimeout(abort, ms);
      const waiter: Waiter = {
        after,
        since: this.polls,
        settle: (found) => {
          clearTimeout(timeout);
          signal?.removeEventListener('abort', abort);
          this.waiters.delete(waiter);
          resolve(found);
        },
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.waiters.add(waiter);
      this.schedule();
    });
  }

  private close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const waiter of this.waiters) waiter.settle(false);
  }

  private schedule(): void {
    if (this.timer || this.polling || this.closed || this.waiters.size === 0) return;
    this.timer = setTimeout(() => void this.poll(), this.config.changes.pollIntervalMs);
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    this.polling = true;
    const poll = ++this.polls;
    let newest: FeedKey | undefined;
    try {
      newest = await this.changes.newestVisible();
      if (this.failing) this.logger.log('the feed can be read again');
      this.failing = false;
    } catch (error) {
      // Waiters time out as usual; the next page read answers 503 if the database stays away.
      if (!this.failing) this.logger.warn(`reading the feed failed: ${String(error)}`);
      this.failing = true;
    } finally {
      this.polling = false;
    }
    if (newest) {
      for (const waiter of this.waiters) {
        if (waiter.since < poll && isAfter(newest, waiter.after)) waiter.settle(true);
      }
    }
    this.schedule();
  }
}
