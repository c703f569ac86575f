// A throwaway streaming-replication pair from Debian's PostgreSQL binaries (initdb, postgres,
// pg_basebackup): a primary and hot standbys cloned from it with pg_basebackup, or a server on a
// data directory made some other way (a restored backup). Each server runs as a child of this
// process on a free 127.0.0.1 port, with trust auth, no Unix socket unless the caller's settings
// ask for one, and its data in a temp directory removed by stop(). (The embedded PostgreSQL of
// embedded-pg.mjs ships no pg_basebackup, and Debian's cannot copy it: the major versions differ.)
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
 * @property {string} dataDir
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

/**
 * Server settings (`-c name=value`) on top of the defaults: TCP on 127.0.0.1 only, no Unix socket,
 * no fsync (the data is thrown away).
 * @typedef {Record<string, string>} ServerSettings
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
 * @param {ServerSettings} [settings]
 */
async function runServer(bin, dir, port, name, settings = {}) {
  const all = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    fsync: 'off',
    ...settings,
  };
  const daemon = startDaemon(
    path.join(bin, 'postgres'),
    [
      '-D',
      dir,
      '-p',
      String(port),
      ...Object.entries(all).flatMap(([setting, value]) => ['-c', `${setting}=${value}`]),
    ],
    { name },
  );
  /** @param {string} database */
  const url = (database) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  // Accepting TCP is not enough: a standby refuses connections until it reaches consistency.
  const deadline = Date.now() + 30_000;
  await waitForPort(daemon, port, 30_000).catch(async (error) => {
    await daemon.stop('SIGKILL');
    throw error;
  });
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
 * @param {string} dataDir
 * @param {() => Promise<void>} remove
 * @returns {ClusterServer}
 */
function server(daemon, port, url, dataDir, remove) {
  return {
    port,
    pid: daemon.pid,
    url,
    dataDir,
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
 * from 127.0.0.1) with `database` created and `settings` on top of the defaults. Returns `url`,
 * `port`, `pid`, `dataDir`, `stop()` and `startStandby()`, which clones it with pg_basebackup -R
 * and starts the standby.
 * @param {{ database: string; prefix?: string; settings?: ServerSettings }} options
 * @returns {Promise<Primary>}
 */
export async function startPrimary({ database, prefix = 'users-service-primary-', settings }) {
  const bin = postgresBinForReplicas();
  if (!bin) throw new Error('Debian PostgreSQL (pg_basebackup) is not installed');
  const { dir, remove } = await serviceTempDir(prefix);
  const data = path.join(dir, 'data');
  const port = await freePort();
  /** @type {Daemon | undefined} */
  let started;
  /** @type {(database: string) => string} */
  let url;
  try {
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
    ({ daemon: started, url } = await runServer(bin, data, port, 'postgres primary', settings));
    const admin = new pg.Client({ connectionString: url('postgres') });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`).finally(() => admin.end());
  } catch (error) {
    await started?.stop('SIGINT');
    await remove();
    throw error;
  }
  const daemon = started;
  const primary = server(daemon, port, url(database), data, remove);
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
        // The standby reports its flush position every second (default 10 s) even when no WAL
        // comes: a commit waiting for it is released soon after synchronous_standby_names
        // accepts it again.
        const running = await runServer(bin, standbyData, standbyPort, 'postgres standby', {
          wal_receiver_status_interval: '1',
        });
        return server(
          running.daemon,
          standbyPort,
          running.url(database),
          standbyData,
          standby.remove,
        );
      } catch (error) {
        await standby.remove();
        throw error;
      }
    },
  };
}

/**
 * Starts a server on a data directory made elsewhere (a restored backup, which then replays WAL
 * first), on a free port with `settings` on top of the defaults; resolves once it accepts
 * connections (a server in archive recovery does once consistent: hot_standby is on by default).
 * `remove` deletes what holds the directory: stop() calls it, and so does a failed start.
 * @param {{
 *   dataDir: string;
 *   database: string;
 *   remove: () => Promise<void>;
 *   settings?: ServerSettings;
 *   name?: string;
 * }} options
 * @returns {Promise<ClusterServer>}
 */
export async function startServerOn({ dataDir, database, remove, settings, name = 'postgres' }) {
  const bin = postgresBinForReplicas();
  if (!bin) throw new Error('Debian PostgreSQL (pg_basebackup) is not installed');
  const port = await freePort();
  try {
    const { daemon, url } = await runServer(bin, dataDir, port, name, settings);
    return server(daemon, port, url(database), dataDir, remove);
  } catch (error) {
    await remove();
    throw error;
  }
}
