// Debian system tools the topology tooling runs (PgBouncer, HAProxy, PostgreSQL 15's initdb,
// pg_basebackup and postgres): where they are, and how to start them as a plain child process we
// can stop by PID. PostgreSQL and PgBouncer refuse to run as root; as root they are started with
// the uid and gid of the `postgres` OS user, and their temp directories are given to that user.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** @import { ExecFileSyncOptions } from 'node:child_process' */

/**
 * @typedef {object} Daemon
 * @property {string} name
 * @property {number | undefined} pid
 * @property {() => string} output
 * @property {() => string[]} watched Lines that matched the `watch` pattern, from the start.
 * @property {() => boolean} running
 * @property {Promise<{ code: number | null; signal: NodeJS.Signals | null }>} exited
 * @property {(signal?: NodeJS.Signals, timeoutMs?: number) => Promise<void>} stop
 */

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The path of `name` in PATH, /usr/sbin or /usr/bin; undefined when it is not installed.
 * @param {string} name
 * @returns {string | undefined}
 */
export function findTool(name) {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin', '/sbin'];
  return dirs
    .filter(Boolean)
    .map((dir) => path.join(dir, name))
    .find((file) => existsSync(file));
}

/**
 * The newest Debian PostgreSQL bin directory holding `tool`, e.g. /usr/lib/postgresql/15/bin.
 * @returns {string | undefined}
 */
export function findPostgresBin(tool = 'pg_basebackup') {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  return readdirSync(base)
    .filter((version) => /^\d+$/.test(version))
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => path.join(base, version, 'bin'))
    .find((bin) => existsSync(path.join(bin, tool)));
}

/**
 * uid and gid to run PostgreSQL and PgBouncer as: the `postgres` user when we are root.
 * @returns {{ uid?: number; gid?: number }}
 */
export function serviceUser() {
  if (process.getuid?.() !== 0) return {};
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (!line)
    throw new Error(
      'running as root needs a `postgres` OS user to run PostgreSQL and PgBouncer as',
    );
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * A fresh temp directory owned by the service user (0700), and its removal.
 * @param {string} prefix
 * @returns {Promise<{ dir: string; remove(): Promise<void> }>}
 */
export async function serviceTempDir(prefix) {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  const { uid, gid } = serviceUser();
  if (uid !== undefined && gid !== undefined) await chown(dir, uid, gid);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Runs a short command as the service user; throws with its output when it fails.
 * @param {string} file
 * @param {string[]} args
 * @param {ExecFileSyncOptions} [options]
 * @returns {Buffer | string}
 */
export function runAsServiceUser(file, args, options = {}) {
  return execFileSync(file, args, { ...serviceUser(), stdio: 'pipe', timeout: 60_000, ...options });
}

/**
 * Starts a long-running server as a child of this process (as the service user when `asUser`),
 * keeping the end of its output, and every line matching `watch` (up to 1000) however long it
 * runs. `stop(signal)` sends the signal to that PID and waits, at most `timeoutMs`, for the exit,
 * then kills it.
 * @param {string} file
 * @param {string[]} args
 * @param {{ asUser?: boolean; name?: string; env?: NodeJS.ProcessEnv; watch?: RegExp }} [options]
 * @returns {Daemon}
 */
export function startDaemon(
  file,
  args,
  { asUser = true, name = path.basename(file), env, watch } = {},
) {
  const child = spawn(file, args, {
    ...(asUser ? serviceUser() : {}),
    env: env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  /** @type {string[]} */
  const watched = [];
  const partial = { stdout: '', stderr: '' };
  /** @param {'stdout' | 'stderr'} stream */
  const keep = (stream) => (/** @type {Buffer | string} */ chunk) => {
    output = (output + chunk).slice(-20_000);
    if (!watch) return;
    const lines = (partial[stream] + chunk).split('\n');
    partial[stream] = lines.pop() ?? '';
    for (const line of lines) if (watch.test(line) && watched.length < 1000) watched.push(line);
  };
  child.stdout.on('data', keep('stdout'));
  child.stderr.on('data', keep('stderr'));
  /** @type {Daemon['exited']} */
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  child.once('error', (error) => keep('stderr')(`\n${name}: ${error.message}\n`));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    name,
    pid: child.pid,
    output: () => output,
    watched: () => [...watched],
    running,
    exited,
    async stop(signal = 'SIGTERM', timeoutMs = 10_000) {
      if (!running()) return;
      // Undefined only when the spawn failed: then kill throws, as it should.
      const pid = /** @type {number} */ (child.pid);
      process.kill(pid, signal);
      let timer;
      const timedOut = new Promise(
        (resolve) => (timer = setTimeout(resolve, timeoutMs, 'timeout')),
      );
      const outcome = await Promise.race([exited, timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout' && running()) {
        process.kill(pid, 'SIGKILL');
        await exited;
      }
    },
  };
}

/**
 * Polls until something accepts TCP connections on 127.0.0.1:port, or the daemon exits.
 * @param {Daemon} daemon
 * @param {number} port
 * @returns {Promise<void>}
 */
export async function waitForPort(daemon, port, timeoutMs = 20_000) {
  const { connect } = await import('node:net');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!daemon.running()) throw new Error(`${daemon.name} exited:\n${daemon.output()}`);
    const open = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await sleep(25);
  }
  throw new Error(
    `${daemon.name} does not listen on 127.0.0.1:${port} after ${timeoutMs} ms:\n${daemon.output()}`,
  );
}

/**
 * startDaemon, then waits until it listens on `port`. If it does not, the daemon is killed and
 * `cleanup` (removing its directory) runs before the error is thrown.
 * @param {string} file
 * @param {string[]} args
 * @param {{
 *   port: number;
 *   cleanup: () => Promise<void>;
 *   asUser?: boolean;
 *   name?: string;
 *   env?: NodeJS.ProcessEnv;
 * }} options
 * @returns {Promise<Daemon>}
 */
export async function startListening(file, args, { port, cleanup, ...options }) {
  const daemon = startDaemon(file, args, options);
  try {
    await waitForPort(daemon, port);
  } catch (error) {
    await daemon.stop('SIGKILL');
    await cleanup();
    throw error;
  }
  return daemon;
}
