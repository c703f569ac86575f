// A throwaway pgBackRest repository (Debian `pgbackrest`) for backup and point-in-time-restore
// drills against a cluster of pg-cluster.mjs: its configuration, the server settings that archive
// WAL into it, stanza-create, full backups, and a restore to a target time into a new data
// directory, started and promoted. Everything lives in one temp directory owned by the `postgres`
// OS user, which runs pgBackRest as it runs PostgreSQL (pgBackRest reads the data directory and
// PostgreSQL runs archive_command). pgBackRest talks to the local server through a Unix socket
// only, so the archived server gets one, in that private directory (the port stays on 127.0.0.1).
import { chown, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { startServerOn } from './pg-cluster.mjs';
import { waitFor } from './service-process.mjs';
import { findTool, runAsServiceUser, serviceTempDir, serviceUser } from './system-tools.mjs';

/** @import { ClusterServer, ServerSettings } from './pg-cluster.mjs' */

/**
 * @typedef {object} BackupFigures
 * @property {string} label pgBackRest's backup label, e.g. 20261127-064548F
 * @property {number} ms wall time of `pgbackrest backup`
 * @property {number} sizeBytes the database files the backup holds
 * @property {number} repositoryBytes what it takes in the repository (compressed)
 */

/**
 * @typedef {object} RestoredServer
 * @property {ClusterServer} server promoted, accepting writes
 * @property {number} restoreMs wall time of `pgbackrest restore`
 * @property {number} recoveryMs from starting PostgreSQL until it left recovery (WAL replayed)
 */

/**
 * @typedef {object} Repository
 * @property {string} stanza
 * @property {ServerSettings} serverSettings for startPrimary: archive every WAL segment here
 * @property {(server: ClusterServer) => Promise<void>} attach writes the stanza's configuration for this
 *   server, runs stanza-create, then `check` (a WAL switch archived end to end)
 * @property {() => BackupFigures} backup a full backup
 * @property {(options: { target: string; set: string; database: string }) => Promise<RestoredServer>}
 *   restore from backup `set` (a label), replaying WAL up to `target` (a PostgreSQL timestamp)
 * @property {() => Promise<void>} remove
 */

/** Bounds pgBackRest's own waits for a WAL segment, below runAsServiceUser's 60 s kill. */
const ARCHIVE_TIMEOUT_S = 30;
/** A drill's restored database replays a few segments: seconds, not minutes. */
const RECOVERY_TIMEOUT_MS = 60_000;

/**
 * The pgbackrest binary, or undefined when it is not installed.
 * @returns {string | undefined}
 */
export function pgbackrestPath() {
  return findTool('pgbackrest');
}

/**
 * A directory the service user owns, for PostgreSQL and pgBackRest to write into.
 * @param {string} dir
 */
async function serviceDir(dir) {
  await mkdir(dir, { mode: 0o700 });
  const { uid, gid } = serviceUser();
  if (uid !== undefined && gid !== undefined) await chown(dir, uid, gid);
}

/**
 * Creates an empty repository (keeping two full backups) in a temp directory. Start the server
 * with `serverSettings`, then `attach()` it before writing what the drill restores.
 * @param {{ stanza?: string; prefix?: string }} [options]
 * @returns {Promise<Repository>}
 */
export async function createRepository({
  stanza = 'users',
  prefix = 'users-service-pgbackrest-',
} = {}) {
  const bin = pgbackrestPath();
  if (!bin) throw new Error('pgbackrest is not installed');
  const { dir, remove } = await serviceTempDir(prefix);
  /** @type {(() => Promise<void>)[]} */
  const restoredDirs = [];
  const config = path.join(dir, 'pgbackrest.conf');
  const socketDir = path.join(dir, 'socket');
  try {
    for (const sub of ['repo', 'log', 'lock', 'socket']) await serviceDir(path.join(dir, sub));
  } catch (error) {
    await remove();
    throw error;
  }
  /** @param {string[]} args */
  const run = (args) =>
    runAsServiceUser(bin, [`--config=${config}`, `--stanza=${stanza}`, ...args], {
      encoding: 'utf8',
    }).toString();

  return {
    stanza,
    serverSettings: {
      archive_mode: 'on',
      // PostgreSQL runs it through the shell, in the data directory (%p is relative to it).
      archive_command: `'${bin}' '--config=${config}' --stanza=${stanza} archive-push %p`,
      unix_socket_directories: socketDir,
    },

    async attach(server) {
      const settings = [
        '[global]',
        `repo1-path=${path.join(dir, 'repo')}`,
        'repo1-retention-full=2',
        `log-path=${path.join(dir, 'log')}`,
        `lock-path=${path.join(dir, 'lock')}`,
        'log-level-console=warn',
        'log-level-file=off',
        // A backup starts with an immediate checkpoint instead of waiting for the next one.
        'start-fast=y',
        `archive-timeout=${ARCHIVE_TIMEOUT_S}`,
        '',
        `[${stanza}]`,
        `pg1-path=${server.dataDir}`,
        `pg1-port=${server.port}`,
        `pg1-socket-path=${socketDir}`,
        'pg1-user=postgres',
        '',
      ];
      // Written as root, read by the service user: world-readable, in a directory only it enters.
      await writeFile(config, settings.join('\n'), { mode: 0o644 });
      run(['stanza-create']);
      run(['check']);
    },

    backup() {
      const started = Date.now();
      run(['--type=full', 'backup']);
      const ms = Date.now() - started;
      const [info] = JSON.parse(run(['--output=json', 'info']));
      const last = info.backup[info.backup.length - 1];
      return {
        label: last.label,
        ms,
        sizeBytes: last.info.size,
        repositoryBytes: last.info.repository.size,
      };
    },

    async restore({ target, set, database }) {
      const restored = await serviceTempDir('users-service-restored-');
      restoredDirs.push(restored.remove);
      const dataDir = path.join(restored.dir, 'data');
      await serviceDir(dataDir);
      const started = Date.now();
      // pgBackRest writes recovery.signal and the recovery settings (restore_command from this
      // repository) to postgresql.auto.conf. The set is named: by itself pgBackRest picks the
      // newest backup whose stop time, in whole seconds, is before the target, and a drill's
      // target can fall in the second its backup ended.
      run([
        `--pg1-path=${dataDir}`,
        `--set=${set}`,
        '--type=time',
        `--target=${target}`,
        '--target-action=promote',
        'restore',
      ]);
      const restoreMs = Date.now() - started;
      const recoveryStarted = Date.now();
      const server = await startServerOn({
        dataDir,
        database,
        remove: restored.remove,
        name: 'postgres restored',
      });
      try {
        await waitFor(
          'the restored server to replay its WAL and promote',
          () => inRecovery(server.url).then((recovering) => !recovering),
          RECOVERY_TIMEOUT_MS,
        );
      } catch (error) {
        await server.stop();
        throw new Error(`${error}\n${server.output()}`, { cause: error });
      }
      return { server, restoreMs, recoveryMs: Date.now() - recoveryStarted };
    },

    async remove() {
      for (const removeRestored of restoredDirs) await removeRestored();
      await remove();
    },
  };
}

/**
 * True while the server at `url` is still replaying WAL (archive recovery, or a standby).
 * @param {string} url
 * @returns {Promise<boolean>}
 */
async function inRecovery(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT pg_is_in_recovery() AS r')).rows[0].r;
  } finally {
    await client.end();
  }
}

/**
 * Closes the server's current WAL segment (pg_switch_wal) and waits until archive_command has
 * stored it: what was committed before the call is then in the archive. Resolves with the time
 * that took, the archiving delay a restore of the latest state would lose at most once a segment
 * is closed.
 * @param {string} url
 * @param {number} [timeoutMs]
 * @returns {Promise<number>}
 */
export async function archiveCurrentWal(url, timeoutMs = 20_000) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const started = Date.now();
    // The name of the segment just closed (pg_walfile_name of a boundary names the one before).
    const { segment } = (await client.query('SELECT pg_walfile_name(pg_switch_wal()) AS segment'))
      .rows[0];
    await waitFor(
      `WAL segment ${segment} archived`,
      async () =>
        (
          await client.query('SELECT 1 FROM pg_stat_archiver WHERE last_archived_wal >= $1', [
            segment,
          ])
        ).rowCount === 1,
      timeoutMs,
    );
    return Date.now() - started;
  } finally {
    await client.end();
  }
}
