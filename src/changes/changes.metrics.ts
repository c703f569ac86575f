import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../observability/metrics.service.js';
import { ChangesRepository, type FeedStats } from './changes.repository.js';

/**
 * The feed's metrics, in the service's registry, read from the database when scraped (one
 * statement per scrape, never per request). docs/events.md says what each tells an operator.
 */
@Injectable()
export class ChangesMetrics {
  private reading?: Promise<FeedStats | undefined>;

  constructor(
    metrics: MetricsService,
    private readonly changes: ChangesRepository,
  ) {
    const registers = [metrics.registry];
    const read = () => this.read();
    new Counter({
      name: 'user_changes_events_total',
      help: 'Change events written (including those of transactions that rolled back)',
      registers,
      async collect() {
        const stats = await read();
        this.reset();
        if (stats) this.inc(stats.written);
      },
    });
    new Gauge({
      name: 'user_changes_visible_age_seconds',
      help: 'Age of the newest change event readers can see, below the oldest running transaction (0: none yet); it grows on a quiet feed too',
      registers,
      async collect() {
        const stats = await read();
        this.reset();
        if (stats) this.set(stats.visibleAgeS ?? 0);
      },
    });
    new Gauge({
      name: 'user_changes_blocking_transaction_age_seconds',
      help: 'Age of the oldest running transaction holding a transaction id, in any database of the cluster: events after it wait for its end (0: none)',
      registers,
      async collect() {
        const stats = await read();
        this.reset();
        if (stats) this.set(stats.blockingAgeS);
      },
    });
  }

  /**
   * The figures of this scrape, undefined when the database cannot be read (no samples then).
   * A scrape collects every metric at once, so the three share the statement in flight.
   */
  private read(): Promise<FeedStats | undefined> {
    this.reading ??= this.changes
      .stats()
      .catch(() => undefined)
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}
