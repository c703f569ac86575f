import { Injectable } from '@nestjs/common';
import { MetricsService } from '../observability/metrics.service.js';
import { ScrapedMetrics } from '../observability/scraped-metrics.js';
import { ChangesRepository } from './changes.repository.js';

/**
 * The feed's metrics, in the service's registry, read from the database when scraped (one
 * statement per scrape, never per request). docs/events.md says what each tells an operator.
 */
@Injectable()
export class ChangesMetrics {
  constructor(metrics: MetricsService, changes: ChangesRepository) {
    const scraped = new ScrapedMetrics(metrics.registry, () => changes.stats());
    scraped.counter(
      'user_changes_events_total',
      'Change events written (including those of transactions that rolled back)',
      (stats) => stats.written,
    );
    scraped.gauge(
      'user_changes_visible_age_seconds',
      'Age of the newest change event readers can see, below the oldest running transaction (0: none yet); it grows on a quiet feed too',
      (stats) => stats.visibleAgeS ?? 0,
    );
    scraped.gauge(
      'user_changes_blocking_transaction_age_seconds',
      'Age of the oldest running transaction holding a transaction id, in any database of the cluster: events after it wait for its end (0: none)',
      (stats) => stats.blockingAgeS,
    );
  }
}
