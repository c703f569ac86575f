import type { Writable } from 'node:stream';
import pg from 'pg';

/**
 * What the service uses of node-postgres' Client beyond its public API, each use named once.
 * pg exposes no public way to close a connection without the protocol's goodbye (end() waits for
 * the active query), to know the query a notice belongs to, to keep a released client out of the
 * pool, to send a cancel request of its own, or to write several queries in one network write.
 * checkPgClient() (src/internals/self-check.ts) fails the boot and a spec when an upgrade of pg
 * changes any of them.
 */
interface ClientInternals {
  /** The query whose reply is being read (pg 8: set from ReadyForQuery to ReadyForQuery). */
  _getActiveQuery(): object | null;
  /** False once the connection broke; pg then refuses new queries and pg-pool destroys the client on release. */
  _queryable: boolean;
  /** pg's pipeline mode: each query is written when queued, without waiting for the previous reply. */
  pipeline: boolean;
  processID: number | null;
  secretKey: number | null;
  host: string;
  port: number;
  connection: PgConnection;
}

/** The parts of pg's Connection (the protocol writer) used here. */
interface PgConnection {
  stream: Writable & { destroy(): void };
  on(event: 'error' | 'connect', listener: () => void): void;
  connect(port: number, host: string): void;
  cancel(processID: number, secretKey: number): void;
}

function internals(client: pg.Client): ClientInternals {
  return client as unknown as ClientInternals;
}

/** The query whose reply is being read on `client`, if any. */
export function activeQuery(client: pg.Client): object | null {
  return internals(client)._getActiveQuery();
}

/** Whether pg still accepts queries on `client` (not once the connection broke or was retired). */
export function isQueryable(client: pg.Client): boolean {
  return internals(client)._queryable;
}

/**
 * From now on `client` refuses new queries ("not queryable") and pg-pool destroys it when it is
 * released, instead of handing it to the next caller. Queries already sent still get their replies.
 */
export function retire(client: pg.Client): void {
  internals(client)._queryable = false;
}

/**
 * Closes the socket at once: every query in flight fails with "Connection terminated", and the
 * server learns only that the client went away (nothing is cancelled: a backend waiting for a
 * synchronous standby keeps waiting).
 */
export function destroySocket(client: pg.Client): void {
  internals(client).connection.stream.destroy();
}

/**
 * Sends PostgreSQL's cancel request for whatever `client`'s backend runs at the moment it
 * arrives: a new connection (with `settings`, so the same host, port and TLS) carrying only the
 * backend's key, as pg's own Client#cancel does. The connection is closed after `timeoutMs` if
 * the server has not closed it by then. Failures are ignored: the caller bounds the query anyway.
 */
export function sendCancelRequest(
  client: pg.Client,
  settings: pg.ClientConfig,
  timeoutMs: number,
): void {
  const self = internals(client);
  if (self.processID === null || self.secretKey === null) return;
  const { processID, secretKey } = self;
  const connection = internals(new pg.Client(settings)).connection;
  connection.on('error', () => {});
  connection.on('connect', () => connection.cancel(processID, secretKey));
  connection.connect(self.port, self.host);
  setTimeout(() => connection.stream.destroy(), timeoutMs).unref();
}

/** Switches pg's pipeline mode on `client`; switch it off only when nothing is in flight. */
export function setPipeline(client: pg.Client, on: boolean): void {
  internals(client).pipeline = on;
}

/** The queries `queue` queues go out in one network write (pg writes each as it is queued). */
export function inOneWrite<T>(client: pg.Client, queue: () => T): T {
  const { stream } = internals(client).connection;
  stream.cork();
  try {
    return queue();
  } finally {
    stream.uncork();
  }
}

/**
 * The internals above, checked on a fresh (unconnected) Client: a list of what no longer holds,
 * empty when everything does.
 */
export function pgClientProblems(): string[] {
  const client = new pg.Client();
  const self = internals(client) as unknown as Record<string, unknown>;
  const connection = self.connection as Record<string, unknown> | undefined;
  const stream = connection?.stream as Record<string, unknown> | undefined;
  const problems: string[] = [];
  const expect = (holds: boolean, what: string) => holds || problems.push(`pg Client: ${what}`);
  expect(typeof self._getActiveQuery === 'function', '_getActiveQuery() is gone');
  expect(self._queryable === true, '_queryable is not a boolean set on a new client');
  expect(self.pipeline === false, 'the pipeline flag is not a boolean');
  expect('processID' in self && 'secretKey' in self, 'processID/secretKey are gone');
  expect(typeof connection?.cancel === 'function', 'connection.cancel() is gone');
  expect(typeof connection?.connect === 'function', 'connection.connect() is gone');
  expect(
    typeof stream?.destroy === 'function' && typeof stream?.cork === 'function',
    'connection.stream is not a socket',
  );
  return problems;
}
