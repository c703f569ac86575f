// A throwaway streaming-replication pair from Debian's PostgreSQL binaries (initdb, postgres,
// pg_basebackup): a primary and hot standbys cloned from it with pg_basebackup. Each server runs
// as a child of this process on a free 127.0.0.1 port, with trust auth, no Unix socket, and its
// data in a temp directory removed by stop(). (The embedded PostgreSQL of embedded-pg.mjs ships
// no pg_basebackup, and Debian's cannot copy it: the major versions differ.)
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports.mjs';
import {
  findPostgresBin,
  runAsServiceUser,
  serviceTempDir,
  startDaemon,
  waitForPort,
} from './system-tools.mjs';

/** @import { Daemon } from './system-tools.mjs' */

/**
 * @typedef {object} ClusterServer
 * @property {string} url postgres://postgres@127.0.0.1:PORT/DATABASE (trust auth)
 * @property {number} port
 * @property {number | undefined} pid
 * @property {() => string} output
 * @property {() => boolean} running
 * @property {() => Promise<void>} halt Fast shutdown; the data directory stays until stop().
 * @property {() => Promise<void>} stop Fast shutdown and removal of the data directory.
 */

/**
 * @typedef {ClusterServer & {
 *   startStandby(options?: { prefix?: string }): Promise<ClusterServer>;
 * }} Primary
 */

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Debian's PostgreSQL bin directory with pg_basebackup, or undefined when not installed.
 * @returns {string | undefined}
 */
export function postgresBinForReplicas() {
  return findPostgresBin('pg_basebackup');
}

/**
 * @param {string} bin
 * @param {string} dir
 * @param {number} port
 * @param {string} name
 */
async function runServer(bin, dir, port, name) {
  const daemon = startDaemon(
    path.join(bin, 'postgres'),
    [
      '-D',
      dir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'fsync=off',
    ],
    { name },
  );
  /** @param {string} database */
  const url = (database) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  // Accepting TCP is not enough: a standby refuses connections until it reaches consistency.
  const deadline = Date.now() + 30_000;
  await waitForPort(daemon, port, 30_000);
  for (;;) {
    const client = new pg.Client({ connectionString: url('postgres') });
    const ok = await client.connect().then(
      () => client.end().then(() => true),
      () => false,
    );
    if (ok) break;
    if (!daemon.running() || Date.now() > deadline) {
      await daemon.stop('SIGKILL');
      throw new Error(`${name} did not accept connections:\n${daemon.output()}`);
    }
    await sleep(50);
  }
  return { daemon, url };
}

/**
 * @param {Daemon} daemon
 * @param {number} port
 * @param {string} url
 * @param {() => Promise<void>} remove
 * @returns {ClusterServer}
 */
function server(daemon, port, url, remove) {
  return {
    port,
    pid: daemon.pid,
    url,
    output: daemon.output,
    running: daemon.running,
    /** Fast shutdown (SIGINT), keeping the data directory: `start()` runs it again. */
    halt: () => daemon.stop('SIGINT'),
    async stop() {
      await daemon.stop('SIGINT');
      await remove();
    },
  };
}

/**
 * Starts a primary (wal_level replica, the default, and initdb's trust lines for replication
 * from 127.0.0.1) with `database` created. Returns `url`, `port`, `pid`, `stop()` and
 * `startStandby()`, which clones it with pg_basebackup -R and starts the standby.
 * @param {{ database: string; prefix?: string }} options
 * @returns {Promise<Primary>}
 */
export async function startPrimary({ database, prefix = 'users-service-primary-' }) {
  const bin = postgresBinForReplicas();
  if (!bin) throw new Error('Debian PostgreSQL (pg_basebackup) is not installed');
  const { dir, remove } = await serviceTempDir(prefix);
  const data = path.join(dir, 'data');
  runAsServiceUser(path.join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-sync',
    '-E',
    'UTF8',
  ]);
  const port = await freePort();
  const { daemon, url } = await runServer(bin, data, port, 'postgres primary');
  const admin = new pg.Client({ connectionString: url('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`).finally(() => admin.end());
  const primary = server(daemon, port, url(database), remove);
  return {
    ...primary,
    async startStandby({ prefix: standbyPrefix = 'users-service-standby-' } = {}) {
      const standby = await serviceTempDir(standbyPrefix);
      const standbyData = path.join(standby.dir, 'data');
      try {
        // -R writes standby.signal and primary_conninfo; -X stream copies the WAL it needs.
        runAsServiceUser(path.join(bin, 'pg_basebackup'), [
          '-h',
          '127.0.0.1',
          '-p',
          String(port),
          '-U',
          'postgres',
          '-D',
          standbyData,
          '-R',
          '-X',
          'stream',
          '-c',
          'fast',
          '--no-sync',
        ]);
        const standbyPort = await freePort();
        const running = await runServer(bin, standbyData, standbyPort, 'postgres standby');
        return server(running.daemon, standbyPort, running.url(database), standby.remove);
      } catch (error) {
        await standby.remove();
        throw error;
      }
    },
  };
}
