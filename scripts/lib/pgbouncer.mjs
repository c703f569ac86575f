// PgBouncer in front of a PostgreSQL server, for the topology tests and the benchmark: pool_mode
// transaction and every other setting at PgBouncer's default, as platform teams run it.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { freePort } from './ports.mjs';
import { findTool, serviceTempDir, startListening } from './system-tools.mjs';

/**
 * @typedef {object} PgBouncer
 * @property {string} url The target URL with its host and port replaced by PgBouncer's
 * @property {number} port
 * @property {number | undefined} pid
 * @property {() => string} output
 * @property {() => Promise<void>} stop
 */

/**
 * The pgbouncer binary, or undefined when it is not installed.
 * @returns {string | undefined}
 */
export function pgbouncerPath() {
  return findTool('pgbouncer');
}

/**
 * Starts PgBouncer on a free 127.0.0.1 port in front of the server of `targetUrl`, in transaction
 * pooling with default settings (`settings` adds or overrides `[pgbouncer]` keys). Returns the
 * same URL through PgBouncer, its port, PID and `stop()` (stops it, removes its directory).
 * @param {{ targetUrl: string; settings?: Record<string, string | number> }} options
 * @returns {Promise<PgBouncer>}
 */
export async function startPgBouncer({ targetUrl, settings = {} }) {
  const binary = pgbouncerPath();
  if (!binary) throw new Error('pgbouncer is not installed (Debian: apt-get install pgbouncer)');
  const target = new URL(targetUrl);
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password || '');
  const port = await freePort();
  const { dir, remove } = await serviceTempDir('users-service-pgbouncer-');
  const ini = {
    listen_addr: '127.0.0.1',
    listen_port: port,
    // TCP only: no Unix socket in a shared directory.
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: path.join(dir, 'userlist.txt'),
    pool_mode: 'transaction',
    ...settings,
  };
  /** @param {string} value */
  const quote = (value) => `"${value.replace(/"/g, '""')}"`;
  await writeFile(path.join(dir, 'userlist.txt'), `${quote(user)} ${quote(password)}\n`, {
    mode: 0o644,
  });
  await writeFile(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || 5432}`,
      '[pgbouncer]',
      ...Object.entries(ini).map(([key, value]) => `${key} = ${value}`),
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const daemon = await startListening(binary, [path.join(dir, 'pgbouncer.ini')], {
    name: 'pgbouncer',
    port,
    cleanup: remove,
  });
  const url = new URL(targetUrl);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString(),
    port,
    pid: daemon.pid,
    output: daemon.output,
    async stop() {
      // SIGTERM: immediate shutdown (SIGINT would wait for clients to disconnect).
      await daemon.stop('SIGTERM');
      await remove();
    },
  };
}
