/** SQLSTATE 08007, transaction_resolution_unknown: PostgreSQL's own name for this condition. */
export const TRANSACTION_RESOLUTION_UNKNOWN = '08007';

/**
 * A write whose commit may or may not have happened, and may or may not be on the synchronous
 * standby: its COMMIT (or the implicit commit of a statement outside a transaction) lost its
 * connection, outlived the statement timeout, or returned after its wait for the standby was
 * cancelled. It must never be answered as a success: a failover could lose it. It maps to HTTP
 * 503 and gRPC UNAVAILABLE; the client retries with the same Idempotency-Key, which replays the
 * stored outcome if the first attempt did commit.
 *
 * It carries `code` 08007 so that code reading a driver error's SQLSTATE sees a connection
 * exception (class 08) rather than a failed query.
 */
export class CommitOutcomeUnknownError extends Error {
  override readonly name = 'CommitOutcomeUnknownError';
  readonly code = TRANSACTION_RESOLUTION_UNKNOWN;

  constructor(reason: string, options?: { cause?: unknown }) {
    super(`the outcome of the commit is unknown: ${reason}`, options);
  }
}

/** The parts of a PostgreSQL NoticeResponse (pg's 'notice' event) read here. */
export interface Notice {
  severity?: string;
  message?: string;
  detail?: string;
  /** The server function that raised it (field R): never translated. */
  routine?: string;
  file?: string;
}

/**
 * PostgreSQL's warning when a backend stops waiting for the synchronous standby (a cancel
 * request, statement_timeout, or pg_terminate_backend) after its commit is already durable
 * locally: the statement still returns success, but the standby may not have the commit.
 * src/backend/replication/syncrep.c, SyncRepWaitForLSN raises only these two warnings: "canceling
 * wait for synchronous replication due to user request" and "canceling the wait for synchronous
 * replication and terminating connection due to administrator command", both with the detail
 * "The transaction has already committed locally, but might not have been replicated to the
 * standby." The first has no SQLSTATE of its own (01000), so it is recognised by the routine that
 * raised it, a field lc_messages never translates, and by its English text where a server or a
 * proxy leaves that field out.
 */
export function isSyncReplicationWaitCancelled(notice: Notice): boolean {
  return (
    notice.routine === 'SyncRepWaitForLSN' ||
    /wait for synchronous replication/i.test(notice.message ?? '') ||
    /committed locally, but might not have been replicated/i.test(notice.detail ?? '')
  );
}
