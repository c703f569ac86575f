import pg from 'pg';
import { QueryFailedError } from 'typeorm';
import {
  activeQuery,
  destroySocket,
  isQueryable,
  retire,
  sendCancelRequest,
} from '../internals/pg-client.js';
import {
  CommitOutcomeUnknownError,
  isSyncReplicationWaitCancelled,
  type Notice,
} from './commit-outcome.js';
import { ConnectionGate } from './connection-gate.js';
import { databaseCounters } from './database-counters.js';
import { certificateRefusal, isConnectionLost } from './database-errors.js';
import { classify, queryConfig, reads } from './statement.js';

export interface ClientOptions {
  /**
   * Refuse a new connection before any statement uses it when it lands on a read-only node (a
   * standby, or a primary being demoted) or when the server would time statements out itself
   * (a `statement_timeout` of the role, database or server): set for the primary's pool.
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

const READ_ONLY = '25006';
const QUERY_CANCELED = '57014';
// SQLSTATE config_file_error: the server is configured in a way the service must not run with.
const MISCONFIGURED = 'F0000';
// Failures a request must answer rather than retry (see isFinalFailure).
const finalFailures = new WeakSet<object>();

/**
 * A node-postgres Client for the service's pools: it bounds every query, never lets anything
 * cut short a commit's wait for the synchronous standby, backs off connection attempts while the
 * database is unreachable, and makes the pool drop a connection that broke or met a read-only
 * node. Everything it adds is local: no statement is sent beyond the caller's, except one
 * settings check per new connection with requireWritable.
 *
 * The statement timeout (`timeoutMs`, 0 for none) is a timer per query. pg's `statement_timeout`
 * config and `options=-c …` are startup parameters, which PgBouncer in transaction pooling
 * rejects; a `SET` per connection is session state PgBouncer does not keep; `SET LOCAL` around
 * every query costs round trips; pg's `query_timeout` only stops waiting on the client, leaving
 * the statement running and the pooled connection busy behind it.
 *
 * Whether a statement can commit is decided by its author, not guessed from its verb
 * (`SELECT f()` writes when `f` does; statement.ts): a statement ending with COMMIT commits; one
 * marked as a read (`reads(sql)`) and the transaction-control statements (BEGIN, ROLLBACK,
 * SAVEPOINT, …) never do; anything else commits when sent outside a transaction block. A text
 * of several statements must end with COMMIT, else it is refused before it is sent.
 *
 * Past the timeout, what happens depends on whether the statement can commit:
 * - A statement that can commit (a COMMIT, or an unmarked statement outside a transaction block,
 *   whose implicit commit waits for the standby as a COMMIT does) is never cancelled: PostgreSQL
 *   answers a cancel that lands in that wait by committing locally, with only a warning, and
 *   every reader then sees a row a failover can take back. Its connection is closed instead: the
 *   backend keeps waiting, the row stays invisible until the standby has it, and the caller gets
 *   CommitOutcomeUnknownError. The same when anything that can commit is queued behind the
 *   statement on the connection (pg's pipeline mode).
 * - Any other statement gets a PostgreSQL cancel request (a new connection carrying the backend's
 *   key, which PgBouncer forwards to the server connection running it), so the server stops it
 *   and the query fails with 57014. A cancel request names a backend, not a statement: one that
 *   arrives after the statement ended lands on whatever the backend runs next. So the connection
 *   is retired at once: it runs nothing else and the pool closes it on release. If the query has
 *   still not returned `abandonAfterMs` later (the server vanished), its connection is closed.
 *
 * A commit whose wait was cut short anyway (the warning notice: an operator's cancel, a server
 * shutting down) fails with CommitOutcomeUnknownError too, and so does a COMMIT or a write
 * outside a transaction whose connection broke before the reply.
 */
export function databaseClient(
  timeoutMs: number,
  { requireWritable = false, abandonAfterMs = 2000 }: ClientOptions = {},
): DatabaseClientClass {
  const gate = new ConnectionGate();
  // Queries whose wait for the synchronous standby was cut short (their warning notice arrived).
  const unreplicated = new WeakSet<object>();

  class DatabaseClient extends pg.Client {
    static readonly gate = gate;
    private readonly settings: pg.ClientConfig;
    /** Queries sent and not answered yet that can commit, and that open a transaction block. */
    private committing = 0;
    private opening = 0;

    constructor(config?: pg.ClientConfig) {
      super(config);
      this.settings = config ?? {};
      // Notices arrive while their statement is the active one, before its reply completes.
      this.on('notice', (notice: Notice) => {
        if (!isSyncReplicationWaitCancelled(notice)) return;
        const active = activeQuery(this);
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
      let shape: ReturnType<typeof classify>;
      try {
        shape = classify(query.text ?? '', (config as { reads?: unknown }).reads === true);
      } catch (refused) {
        // Nothing is sent; the caller learns why as it would learn a server's refusal.
        process.nextTick(() => reply!(refused as Error));
        return result as never;
      }
      // A client that is not queryable (retired, broken) sends nothing: no commit to wait for.
      const commits =
        isQueryable(this) &&
        (shape.kind === 'commit' || (shape.kind === 'other' && this.outsideTransaction()));
      const opens = shape.opens;
      if (commits) this.committing++;
      if (opens) this.opening++;
      const timers: NodeJS.Timeout[] = [];
      let timedOut = false;
      if (timeoutMs > 0) {
        timers.push(
          setTimeout(() => {
            timedOut = true;
            timers.push(...this.stop(commits));
          }, timeoutMs),
        );
      }
      query.callback = (error, res) => {
        for (const timer of timers) clearTimeout(timer);
        if (commits) this.committing--;
        if (opens) this.opening--;
        const failure = this.outcome(query, commits, timedOut, error);
        reply!(failure, failure ? undefined : res);
      };
      (super.query as (q: unknown) => void)(query);
      return result as never;
    }

    /**
     * Whether a write sent now would commit by itself: no transaction block is open or being
     * opened, or one is being committed (in pipeline mode the status is that of the last reply).
     */
    private outsideTransaction(): boolean {
      return (this.getTransactionStatus() === 'I' && this.opening === 0) || this.committing > 0;
    }

    /** The statement outlived the timeout: stop it, never by cutting a commit short. */
    private stop(commits: boolean): NodeJS.Timeout[] {
      if (commits || this.committing > 0) {
        destroySocket(this);
        return [];
      }
      retire(this);
      sendCancelRequest(this, this.settings, abandonAfterMs);
      return [setTimeout(() => destroySocket(this), abandonAfterMs)];
    }

    /** The error to answer with, or undefined for the query's own success. */
    private outcome(
      query: object,
      commits: boolean,
      timedOut: boolean,
      error?: Error,
    ): Error | undefined {
      if (unreplicated.has(query)) {
        // Committed locally and visible to every reader, replicated or not. A keyed create may
        // still run again (a demotion's fast shutdown ends waits this way): its retry finds the
        // stored key, and the replay returns only once the standby has the outcome
        // (IdempotencyKeysRepository.find).
        return unknownOutcome(
          'the wait for the synchronous standby was cut short; the commit may be missing on the standby',
          error,
        );
      }
      if (!error) return undefined;
      if (timedOut) {
        if (commits) {
          return final(
            unknownOutcome(
              'it outlived the statement timeout and its connection was closed while it may be waiting for the standby',
              error,
            ),
          );
        }
        return final(
          (error as { code?: string }).code === QUERY_CANCELED
            ? error
            : Object.assign(
                new Error('the statement outlived the statement timeout', { cause: error }),
                { code: QUERY_CANCELED },
              ),
        );
      }
      const lost = isConnectionLost(error);
      if (lost || (error as { code?: string }).code === READ_ONLY) {
        gate.lost();
        // pg-pool destroys a released client that is not queryable instead of pooling it: a
        // connection on a read-only node, or one that broke, would fail the next request too.
        retire(this);
        if (commits && lost) {
          return unknownOutcome('the connection broke before the commit returned', error);
        }
      }
      return error;
    }

    private async connectThroughGate(): Promise<void> {
      const refused = gate.attempt();
      if (refused) throw refused;
      try {
        await super.connect();
        if (requireWritable) await this.refuseUnsafeSession();
        gate.succeeded();
      } catch (caught) {
        const error = certificateRefusal(caught) ?? caught;
        gate.failed(error);
        throw error;
      }
    }

    /**
     * A read-only node cannot take writes; the other settings would end or weaken a commit that
     * the service counts on (unsafeSetting).
     */
    private async refuseUnsafeSession(): Promise<void> {
      const { rows } = await (
        this.query as (config: pg.QueryConfig) => Promise<pg.QueryResult<ServerSetting>>
      )(queryConfig(SESSION_SETTINGS));
      const settings = new Map(rows.map((row) => [row.name, row]));
      if (settings.get('transaction_read_only')?.setting === 'on') {
        await this.end().catch(() => {});
        throw Object.assign(
          new Error('the database is read-only (a standby, or a primary being demoted)'),
          { code: READ_ONLY },
        );
      }
      const unsafe = unsafeSetting(settings, timeoutMs);
      if (unsafe) {
        await this.end().catch(() => {});
        throw Object.assign(new Error(unsafe), { code: MISCONFIGURED });
      }
    }
  }
  return DatabaseClient;
}

interface ServerSetting {
  name: string;
  /** In the setting's base unit (ms for the timeouts). */
  setting: string;
  /** As SHOW prints it: `5s`. */
  shown: string;
  /** Where the value comes from: `default`, `configuration file`, `database`, `user`, … */
  source: string;
}

// One round trip per new connection. transaction_timeout exists from PostgreSQL 17 on; an older
// server returns no row for it.
const SESSION_SETTINGS = reads(
  'SELECT name, setting, current_setting(name) AS shown, source FROM pg_settings WHERE name IN ' +
    "('transaction_read_only', 'statement_timeout', 'transaction_timeout', " +
    "'idle_in_transaction_session_timeout', 'synchronous_commit')",
);

// synchronous_commit from weakest to strongest: below `on`, a commit returns before the
// synchronous standby has flushed it.
const SYNCHRONOUS_COMMIT = ['off', 'local', 'remote_write', 'on', 'remote_apply'];
// The sources of a value that is the cluster's own rather than set for a role, a database or a
// connection.
const CLUSTER_SOURCES = new Set([
  'default',
  'configuration file',
  'command line',
  'environment variable',
]);

/**
 * Why a primary connection with these settings must not be used, or undefined (docs/failover.md,
 * "What the platform must not configure"):
 * - `statement_timeout` or `transaction_timeout` cancels a commit's wait for the synchronous
 *   standby as a cancel request does (PostgreSQL then commits locally, with only a warning);
 * - `idle_in_transaction_session_timeout` shorter than the statement timeout (any, without one)
 *   ends a transaction whose next statement or pipelined COMMIT is still on its way, a wait the
 *   service allows each statement: the COMMIT then meets a closed connection, its outcome unknown;
 * - `synchronous_commit` set for the role, the database or the connection below `on` (the
 *   cluster's floor for a synchronous standby) acknowledges commits the standby may not have.
 */
function unsafeSetting(
  settings: Map<string, ServerSetting>,
  timeoutMs: number,
): string | undefined {
  const cancelsCommits = (name: string) => {
    const value = settings.get(name);
    if (!value || value.setting === '0') return undefined;
    return (
      `the server sets ${name} = ${value.shown} for this role or database: it would cut short ` +
      'commits waiting for the synchronous standby and show rows a failover can take back; set ' +
      `it to 0 (ALTER ROLE … RESET ${name}), DB_STATEMENT_TIMEOUT_MS bounds statements instead`
    );
  };
  const idle = settings.get('idle_in_transaction_session_timeout');
  const idleMs = Number(idle?.setting ?? 0);
  const sync = settings.get('synchronous_commit');
  return (
    cancelsCommits('statement_timeout') ??
    cancelsCommits('transaction_timeout') ??
    (idle && idleMs > 0 && (timeoutMs === 0 || idleMs < timeoutMs)
      ? `the server sets idle_in_transaction_session_timeout = ${idle.shown}, shorter than the ` +
        `statement timeout (DB_STATEMENT_TIMEOUT_MS = ${timeoutMs}): it would end a transaction ` +
        'whose COMMIT is on its way, leaving its outcome unknown; set it to 0 or above ' +
        'DB_STATEMENT_TIMEOUT_MS'
      : undefined) ??
    (sync &&
    !CLUSTER_SOURCES.has(sync.source) &&
    SYNCHRONOUS_COMMIT.indexOf(sync.setting) < SYNCHRONOUS_COMMIT.indexOf('on')
      ? `the server sets synchronous_commit = ${sync.setting} for this ${sync.source}, weaker ` +
        'than the cluster: a commit would return before the synchronous standby has it, and a ' +
        'failover could lose it; reset it (ALTER ROLE … RESET synchronous_commit)'
      : undefined)
  );
}

function unknownOutcome(reason: string, cause?: Error): CommitOutcomeUnknownError {
  databaseCounters.commitOutcomesUnknown++;
  return new CommitOutcomeUnknownError(reason, { cause });
}

function final<E extends Error>(error: E): E {
  finalFailures.add(error);
  return error;
}

/**
 * The failure is the request's answer, never a reason to run its work again: the statement
 * outlived the statement timeout (the request has had its time, and a COMMIT left waiting still
 * holds its locks, so a retry would only wait for them).
 */
export function isFinalFailure(error: unknown): boolean {
  const driver: unknown = error instanceof QueryFailedError ? error.driverError : error;
  return typeof driver === 'object' && driver !== null && finalFailures.has(driver);
}

interface RunningQuery {
  text?: string;
  callback?: (error?: Error, res?: unknown) => void;
}
