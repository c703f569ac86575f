/**
 * Events of the database layer that operators watch, counted where they happen and read by the
 * metrics when scraped (db_failover_retries_total, db_commit_outcome_unknown_total), so that this
 * layer knows nothing of metrics. Monotonic, for the life of the process.
 */
export const databaseCounters = {
  /** Keyed creates run again after a failover error (src/database/failover-retry.ts). */
  failoverRetries: 0,
  /** Commits whose outcome the service could not learn (CommitOutcomeUnknownError). */
  commitOutcomesUnknown: 0,
};
