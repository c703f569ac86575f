import pg from 'pg';
import { QueryFailedError } from 'typeorm';
import {
  CommitOutcomeUnknownError,
  isSyncReplicationWaitCancelled,
  type Notice,
} from './commit-outcome.js';
import { ConnectionGate } from './connection-gate.js';

export interface ClientOptions {
  /**
   * Refuse a new connection that lands on a read-only node (a standby, or a primary being
   * demoted) before any statement uses it: set for the primary's pool, not for replicas.
   */
  requireWritable?: boolean;
  /**
   * How long after the statement timeout's cancel request a query may still run before its
   * connection is destroyed (the cancel could not reach a server that vanished). Also bounds the
   * cancel request's own connection. Default 2000 (DB_CONNECT_TIMEOUT_MS's default).
   */
  abandonAfterMs?: number;
}

/** The pg Client class of one pool, with the connection gate its clients share. */
export type DatabaseClientClass = typeof pg.Client & { readonly gate: ConnectionGate };

// COMMIT, END (its synonym) and COMMIT AND CHAIN: the statements whose reply is the commit's; also
// a simple query of several statements that ends with one (its reply comes after the commit's).
const COMMIT = /^\s*(COMMIT|END)\b|;\s*(COMMIT|END)\s*;?\s*$/i;
// Statements outside a transaction that commit on their own: their implicit commit waits for the
// synchronous standby exactly as a COMMIT does.
const WRITE = /^\s*(INSERT|UPDATE|DELETE|MERGE)\b/i;
const READ_ONLY = '25006';
// Errors of statements that outlived the statement timeout (see outlivedStatementTimeout).
const outOfTime = new WeakSet<object>();

/**
 * A node-postgres Client for the service's pools: it bounds every query, refuses to acknowledge
 * a commit the synchronous standby may not have, backs off connection attempts while the
 * database is unreachable, and makes the pool drop a connection that broke or met a read-only
 * node. Everything it adds is local: no statement is sent beyond the caller's, except one
 * `SHOW transaction_read_only` per new connection with requireWritable.
 *
 * The statement timeout (`timeoutMs`, 0 for none). pg's `statement_timeout` config and `options=-c
 * …` are startup parameters, which PgBouncer in transaction pooling rejects ("unsupported startup
 * parameter"); a `SET` per connection is session state PgBouncer does not keep; `SET LOCAL` around
 * every query costs two more round trips; pg's `query_timeout` only stops waiting on the client,
 * leaving the statement running and the pooled connection busy behind it. Here a timer per query
 * sends a PostgreSQL cancel request (a new connection carrying the backend's key, which PgBouncer
 * forwards to the server connection running the statement), so the server stops the statement and
 * the query fails with 57014, as with statement_timeout. If the query has still not returned
 * `abandonAfterMs` later (the server vanished, so the cancel cannot reach it), the connection is
 * destroyed and the query fails as a lost connection.
 *
 * A COMMIT is never cancelled. A cancel that lands while a COMMIT waits for the synchronous
 * standby ends the wait and returns success with a WARNING: the commit is then visible on the
 * primary although the standby may never get it, and a failover loses it. Past the timeout a
 * COMMIT's connection is destroyed instead: the server's backend keeps waiting, the commit stays
 * invisible until the standby confirms it (or the standby requirement is lifted), and the caller
 * gets CommitOutcomeUnknownError. So does a statement whose wait for the standby was cancelled
 * anyway (its warning notice, e.g. a write outside a transaction hit by the timeout, or an
 * operator's pg_cancel_backend), and a COMMIT or a write outside a transaction whose connection
 * broke before the reply.
 */
export function cancellingClient(
  timeoutMs: number,
  { requireWritable = false, abandonAfterMs = 2000 }: ClientOptions = {},
): DatabaseClientClass {
  const gate = new ConnectionGate();
  // Queries whose wait for the synchronous standby was cancelled (their warning notice arrived).
  const unreplicated = new WeakSet<object>();

  class CancellingClient extends pg.Client {
    static readonly gate = gate;
    private readonly settings: pg.ClientConfig;

    constructor(config?: pg.ClientConfig) {
      super(config);
      this.settings = config ?? {};
      // Notices arrive while their statement is the active one, before its reply completes.
      this.on('notice', (notice: Notice) => {
        if (!isSyncReplicationWaitCancelled(notice)) return;
        const active = internals(this)._getActiveQuery();
        if (active) unreplicated.add(active);
      });
      // A connection destroyed by the timeout emits 'error'. The pool and TypeORM listen while they
      // hold the client; this keeps a client held by anyone else from crashing the process.
      this.on('error', () => {});
    }

    // pg-pool calls connect(callback); the promise form serves direct use.
    override connect(...args: unknown[]): never {
      const callback = args[0] as ((error: Error | null, client?: unknown) => void) | undefined;
      const connecting = this.connectThroughGate();
      if (!callback) return connecting.then(() => this) as never;
      connecting.then(
        () => callback(null, this),
        (error: Error) => callback(error),
      );
      return undefined as never;
    }

    // pg's overloads: text or a config object, with or without values, with a callback (pg's
    // Pool#query) or returning a promise (TypeORM). A Submittable (a cursor) passes unbounded.
    override query(...args: unknown[]): never {
      const [config, values, callback] = args as [unknown, unknown, unknown];
      if (config == null || typeof (config as { submit?: unknown }).submit === 'function') {
        return (super.query as (...a: unknown[]) => never)(...args);
      }
      // The Query object is built here so that notices and the outcome can be tied to it.
      const query = new pg.Query(
        config as pg.QueryConfig,
        values as unknown[],
        callback as () => void,
      ) as unknown as RunningQuery;
      let reply = query.callback;
      const result = reply
        ? undefined
        : new Promise((resolve, reject) => {
            reply = (error, res) => (error ? reject(error) : resolve(res));
          });
      const commit = COMMIT.test(query.text ?? '');
      const commitsAlone =
        commit || (this.getTransactionStatus() === 'I' && WRITE.test(query.text ?? ''));
      const timers: NodeJS.Timeout[] = [];
      let timedOut = false;
      if (timeoutMs > 0) {
        timers.push(
          setTimeout(() => {
            timedOut = true;
            if (commit) return this.destroyConnection();
            this.cancelActiveQuery();
            timers.push(setTimeout(() => this.destroyConnection(), abandonAfterMs));
          }, timeoutMs),
        );
      }
      query.callback = (error, res) => {
        for (const timer of timers) clearTimeout(timer);
        const failure = this.outcome(query, commitsAlone, error);
        if (failure && timedOut) outOfTime.add(failure);
        reply!(failure, failure ? undefined : res);
      };
      (super.query as (q: unknown) => void)(query);
      return result as never;
    }

    /** The error to answer with, or undefined for the query's own success. */
    private outcome(query: object, commitsAlone: boolean, error?: Error): Error | undefined {
      if (unreplicated.has(query)) {
        return new CommitOutcomeUnknownError(
          'the wait for the synchronous standby was cancelled; the commit may be missing on the standby',
          { cause: error },
        );
      }
      if (!error) return undefined;
      if (isBrokenConnection(error) || (error as { code?: string }).code === READ_ONLY) {
        gate.lost();
        // pg-pool destroys a released client that is not queryable instead of pooling it: a
        // connection on a read-only node, or one that broke, would fail the next request too.
        internals(this)._queryable = false;
        if (commitsAlone && isBrokenConnection(error)) {
          return new CommitOutcomeUnknownError('the connection broke before the commit returned', {
            cause: error,
          });
        }
      }
      return error;
    }

    private async connectThroughGate(): Promise<void> {
      const refused = gate.attempt();
      if (refused) throw refused;
      try {
        await super.connect();
        if (requireWritable) await this.refuseReadOnly();
        gate.succeeded();
      } catch (error) {
        gate.failed(error);
        throw error;
      }
    }

    private async refuseReadOnly(): Promise<void> {
      const { rows } = await (
        this.query as (sql: string) => Promise<pg.QueryResult<{ transaction_read_only: string }>>
      )('SHOW transaction_read_only');
      if (rows[0]?.transaction_read_only !== 'on') return;
      await this.end().catch(() => {});
      throw Object.assign(
        new Error('the database is read-only (a standby, or a primary being demoted)'),
        { code: READ_ONLY },
      );
    }

    private destroyConnection(): void {
      (this as unknown as { connection: CancelConnection }).connection.stream.destroy();
    }

    private cancelActiveQuery(): void {
      const self = internals(this);
      if (!self._getActiveQuery()) return;
      // What pg's own Client#cancel does, without its deprecated activeQuery accessor: a new
      // connection (with the same TLS settings) that sends only the cancel request.
      const connection = (
        new pg.Client(this.settings) as unknown as { connection: CancelConnection }
      ).connection;
      // A failed cancel leaves the query to its abandon timer; nothing else to do.
      connection.on('error', () => {});
      connection.on('connect', () => {
        connection.cancel(self.processID, self.secretKey);
      });
      connection.connect(self.port, self.host);
      setTimeout(() => connection.stream.destroy(), abandonAfterMs).unref();
    }
  }
  return CancellingClient;
}

/**
 * The statement failed after it outlived the statement timeout: cancelled (57014), its connection
 * closed by the service, or a COMMIT whose outcome is unknown because it was still waiting. The
 * request has used the time it was given, and a COMMIT's backend may still hold its locks: such a
 * failure is answered, never retried (src/database/failover-retry.ts).
 */
export function outlivedStatementTimeout(error: unknown): boolean {
  const driver: unknown = error instanceof QueryFailedError ? error.driverError : error;
  return typeof driver === 'object' && driver !== null && outOfTime.has(driver);
}

/** The connection broke: the socket closed or failed, or the server is shutting this session down. */
function isBrokenConnection(error: Error & { code?: string }): boolean {
  const code = error.code ?? '';
  return (
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code === 'ETIMEDOUT' ||
    error.message.includes('Connection terminated') ||
    error.message.includes('not queryable')
  );
}

interface RunningQuery {
  text?: string;
  callback?: (error?: Error, res?: unknown) => void;
}

/** The parts of pg's Client internals used here. */
interface ClientInternals {
  _getActiveQuery(): object | null;
  _queryable: boolean;
  processID: number;
  secretKey: number;
  host: string;
  port: number;
}

function internals(client: object): ClientInternals {
  return client as unknown as ClientInternals;
}

interface CancelConnection {
  on(event: 'error' | 'connect', listener: () => void): void;
  connect(port: number, host: string): void;
  cancel(processID: number, secretKey: number): void;
  stream: { destroy(): void };
}
