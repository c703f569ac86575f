/**
 * SQL for the horizon of the statement's own snapshot, as text (a bigint transaction id): every
 * transaction with a smaller id had ended when the snapshot was taken, so what the statement
 * reads holds all of their changes; a transaction with this id or a larger one may show there or
 * not. The change feed reads below it; a list's `Changes-Token` is the newest event below it.
 */
export const SNAPSHOT_HORIZON = 'pg_snapshot_xmin(pg_current_snapshot())::text';
