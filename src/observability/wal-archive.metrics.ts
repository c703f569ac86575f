import { Injectable } from '@nestjs/common';
import { PrimaryPool } from '../database/queryable.js';
import { reads } from '../database/statement.js';
import { MetricsService } from './metrics.service.js';
import { ScrapedMetrics } from './scraped-metrics.js';

/** The primary's WAL archiver as pg_stat_archiver shows it (readable by every role). */
interface WalArchive {
  /** archive_mode is not `off`. */
  enabled: boolean;
  archived: number;
  failed: number;
  /** The last attempt failed (its failure is newer than the last success). */
  failing: boolean;
  /** Seconds since a segment was last archived; null when none has been. */
  lastArchivedAgeS: number | null;
}

const WAL_ARCHIVE_SQL = reads(`
  SELECT current_setting('archive_mode') <> 'off' AS "enabled",
    archived_count::float8 AS "archived", failed_count::float8 AS "failed",
    coalesce(last_failed_time > last_archived_time, last_failed_time IS NOT NULL) AS "failing",
    extract(epoch FROM now() - last_archived_time)::float8 AS "lastArchivedAgeS"
  FROM pg_stat_archiver`);

/**
 * The primary's continuous WAL archiving, the half of the backups the database itself knows
 * about (docs/backup.md): read from pg_stat_archiver when scraped, one statement per scrape. A
 * failing archive loses the point-in-time restore's newest instants and fills the primary's
 * disk with WAL it must keep (runbook: UsersServiceWalArchiveFailing). The counters start again
 * on a new primary after a failover; Prometheus's increase() reads that as a reset.
 */
@Injectable()
export class WalArchiveMetrics {
  constructor(metrics: MetricsService, primary: PrimaryPool) {
    const scraped = new ScrapedMetrics(metrics.registry, async () => {
      const [row] = await primary.query<WalArchive>(WAL_ARCHIVE_SQL);
      return row;
    });
    scraped.gauge(
      'db_wal_archive_enabled',
      "Whether the primary archives its WAL (archive_mode is not 'off')",
      (archive) => (archive.enabled ? 1 : 0),
    );
    scraped.counter(
      'db_wal_archived_total',
      'WAL segments the primary archived since it started',
      (archive) => archive.archived,
    );
    scraped.counter(
      'db_wal_archive_failures_total',
      "Failed attempts of the primary's archive_command since it started",
      (archive) => archive.failed,
    );
    scraped.gauge(
      'db_wal_archive_failing',
      'Whether the last attempt to archive a WAL segment failed (1) or not (0)',
      (archive) => (archive.failing ? 1 : 0),
    );
    scraped.gauge(
      'db_wal_archive_last_success_age_seconds',
      'Seconds since the primary last archived a WAL segment (-1: never)',
      (archive) => archive.lastArchivedAgeS ?? -1,
    );
  }
}
