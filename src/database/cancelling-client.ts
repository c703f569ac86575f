import pg from 'pg';

/**
 * A node-postgres Client whose queries are cancelled on the server after `timeoutMs`.
 *
 * Why not the alternatives: pg's `statement_timeout` config and `options=-c …` are startup
 * parameters, which PgBouncer in transaction pooling rejects ("unsupported startup parameter");
 * a `SET` per connection is session state PgBouncer does not keep; `SET LOCAL` in a transaction
 * around every query costs two more round trips per query; pg's `query_timeout` only stops
 * waiting on the client, leaving the statement running and the pooled connection busy behind it.
 * Here a timer per query sends a PostgreSQL cancel request (a new connection carrying the
 * backend's key, which PgBouncer forwards to the server connection running the statement), so the
 * server stops the statement and the query fails with 57014, as with statement_timeout. The cost
 * is one timer per query; nothing extra is sent unless a query outlives the bound.
 */
export function cancellingClient(timeoutMs: number): typeof pg.Client {
  class CancellingClient extends pg.Client {
    private readonly settings: pg.ClientConfig;

    constructor(config?: pg.ClientConfig) {
      super(config);
      this.settings = config ?? {};
    }

    // pg's overloads: the callback form (what pg's Pool#query uses) and the promise form (what
    // TypeORM uses) are bounded; a Submittable (a query object, a cursor) is not.
    override query(...args: unknown[]): never {
      const callback = args.at(-1);
      if (typeof callback === 'function') {
        const timer = setTimeout(() => this.cancelActiveQuery(), timeoutMs);
        args[args.length - 1] = (...results: unknown[]) => {
          clearTimeout(timer);
          (callback as (...a: unknown[]) => void)(...results);
        };
        return (super.query as (...a: unknown[]) => never)(...args);
      }
      const result = (super.query as (...a: unknown[]) => unknown)(...args);
      if (!(result instanceof Promise)) return result as never;
      const timer = setTimeout(() => this.cancelActiveQuery(), timeoutMs);
      return result.finally(() => clearTimeout(timer)) as never;
    }

    private cancelActiveQuery(): void {
      const self = this as unknown as CancelTarget;
      if (!self._getActiveQuery()) return;
      // What pg's own Client#cancel does, without its deprecated activeQuery accessor: a new
      // connection (with the same TLS settings) that sends only the cancel request.
      const connection = (
        new pg.Client(this.settings) as unknown as { connection: CancelConnection }
      ).connection;
      // A failed cancel leaves the query to finish on its own; nothing else to do.
      connection.on('error', () => {});
      connection.on('connect', () => {
        connection.cancel(self.processID, self.secretKey);
      });
      connection.connect(self.port, self.host);
    }
  }
  return CancellingClient;
}

/** The parts of pg's Client and Connection internals a cancel request needs. */
interface CancelTarget {
  _getActiveQuery(): unknown;
  processID: number;
  secretKey: number;
  host: string;
  port: number;
}

interface CancelConnection {
  on(event: 'error' | 'connect', listener: () => void): void;
  connect(port: number, host: string): void;
  cancel(processID: number, secretKey: number): void;
  stream: { end(): void };
}
