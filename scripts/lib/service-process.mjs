// The built service (`node --import ./dist/src/telemetry.js dist/src/main.js`) as a real process, as a container runs it, for the
// tests, the benchmark, the soak run and the interop check: spawned on free loopback ports, its
// output drained from pipes, readiness polled, stopped by its PID with SIGTERM (then SIGKILL).
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePorts } from './ports.mjs';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** The built service's entry in a checkout of this repository (`root`, this one by default). */
export const serviceEntry = (root = ROOT) => path.join(root, 'dist', 'src', 'main.js');
/**
 * Preloaded before the service, as the Dockerfile and `npm run start:prod` do: it starts tracing
 * when an OTEL_EXPORTER_OTLP_ENDPOINT is set, and must run before the modules it instruments load.
 */
export const telemetryEntry = (root = ROOT) => path.join(root, 'dist', 'src', 'telemetry.js');
export const SERVICE_ENTRY = serviceEntry();

/** @import { ChildProcessByStdio } from 'node:child_process' */
/** @import { Readable } from 'node:stream' */

/**
 * @typedef {object} ExitStatus
 * @property {number | null} code
 * @property {NodeJS.Signals | null} signal
 */

/**
 * @typedef {object} ServiceProcess
 * @property {string} name
 * @property {ChildProcessByStdio<null, Readable, Readable>} child
 * @property {number} pid
 * @property {number} port
 * @property {number} grpcPort
 * @property {number} metricsPort
 * @property {string} url http://127.0.0.1:PORT
 * @property {string} metricsUrl http://127.0.0.1:METRICS_PORT/metrics: Prometheus metrics are not
 *   on the API port.
 * @property {string} grpcAddress 127.0.0.1:GRPC_PORT
 * @property {() => string} output
 * @property {Promise<ExitStatus>} exited
 * @property {() => ExitStatus | undefined} exitStatus
 * @property {() => boolean} alive
 * @property {(options?: { timeoutMs?: number }) => Promise<ExitStatus>} stop
 */

/**
 * @typedef {object} StartOptions
 * @property {Record<string, string | undefined>} [env]
 * @property {string} [entry]
 * @property {string[]} [nodeFlags]
 * @property {number} [keepChars] How much of the output `output()` keeps (the end of it); all by
 *   default.
 * @property {string} [name]
 * @property {string} [execPath] The node binary to run it with; this process's own by default.
 * @property {string} [root] The checkout of this repository whose built service runs (its
 *   `dist/`, and the working directory); this one by default. Another one, such as a git worktree
 *   of an older commit with `dist/` built, lets the benchmark run two builds side by side.
 */

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * @param {number} pid
 * @param {NodeJS.Signals} name
 */
function signal(pid, name) {
  try {
    process.kill(pid, name);
  } catch {
    // it exited on its own; the exit event is on its way
  }
}

/**
 * Builds dist/ when the sources are newer than it (a no-op after `npm run build`).
 * @param {{ stdio?: 'ignore' | 'inherit' }} [options]
 * @returns {void}
 */
export function buildService({ stdio = 'ignore' } = {}) {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build-if-needed.mjs')], {
    cwd: ROOT,
    stdio: ['ignore', stdio, stdio],
  });
}

/**
 * Spawns `node [nodeFlags] entry` (`node` is this process's runtime unless `execPath` names
 * another, such as the pinned Node 24 of scripts/lib/node-runtime.mjs; the service unless `entry`
 * names another server, such as a benchmark baseline; the service also gets `--import` its
 * telemetry entry first), in `root`, with `HOST=127.0.0.1` and free `PORT`, `GRPC_PORT` and `METRICS_PORT`,
 * plus `env`; nothing
 * else of this process's environment but PATH and HOME. Both output pipes are always drained (a
 * full pipe would block the process's logging); `output()` is what they carried, its last
 * `keepChars` characters (all of it by default: tests assert on it). Does not wait for readiness
 * (see waitUntilReady): some callers expect the process to fail at boot.
 * @param {StartOptions} [options]
 * @returns {Promise<ServiceProcess>}
 */
export async function startService({
  env = {},
  root = ROOT,
  entry = serviceEntry(root),
  nodeFlags = [],
  keepChars = Infinity,
  name = 'service',
  execPath = process.execPath,
} = {}) {
  // Reserved together so no two can be the same port.
  const [port, grpcPort, metricsPort] = await freePorts(3);
  const preload =
    entry === serviceEntry(root) ? ['--import', pathToFileURL(telemetryEntry(root)).href] : [];
  const child = spawn(execPath, [...preload, ...nodeFlags, entry], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOST: '127.0.0.1',
      PORT: String(port),
      GRPC_PORT: String(grpcPort),
      METRICS_PORT: String(metricsPort),
      ...env,
    },
  });
  // Raw chunks, the oldest dropped past `keepChars`: a busy service logs a line per request, and
  // decoding or copying all of it would cost the load generator's CPU in the benchmark.
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  /** @param {Buffer} chunk */
  const keep = (chunk) => {
    chunks.push(chunk);
    size += chunk.length;
    while (size - chunks[0].length >= keepChars)
      size -= /** @type {Buffer} */ (chunks.shift()).length;
  };
  const output = () => {
    const text = Buffer.concat(chunks).toString('utf8');
    return text.length > keepChars ? text.slice(-keepChars) : text;
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  /** @type {ExitStatus | undefined} */
  let exitStatus;
  /** @type {Promise<ExitStatus>} */
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve((exitStatus = { code, signal }))),
  );
  return {
    name,
    child,
    // Defined: spawn of this same node binary does not fail.
    pid: /** @type {number} */ (child.pid),
    port,
    grpcPort,
    metricsPort,
    url: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    output,
    exited,
    exitStatus: () => exitStatus,
    alive: () => exitStatus === undefined,
    /** SIGTERM, then SIGKILL after `timeoutMs`; resolves with the exit status (at once if gone). */
    async stop({ timeoutMs = 10_000 } = {}) {
      if (exitStatus) return exitStatus;
      const pid = /** @type {number} */ (child.pid);
      signal(pid, 'SIGTERM');
      /** @type {NodeJS.Timeout | undefined} */
      let timer;
      const status = await Promise.race([
        exited,
        /** @type {Promise<void>} */ (
          new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))
        ),
      ]);
      // A pending timer would keep the caller's process (a test runner) alive.
      clearTimeout(timer);
      if (status) return status;
      signal(pid, 'SIGKILL');
      return exited;
    },
  };
}

/**
 * The last `lines` lines of a process's output, indented, for an error message.
 * @param {ServiceProcess} service
 * @returns {string}
 */
export function outputTail(service, lines = 40) {
  return service
    .output()
    .split('\n')
    .filter(Boolean)
    .slice(-lines)
    .map((line) => `  ${line}`)
    .join('\n');
}

/**
 * Polls GET /health/ready until it answers 200. Fails at once, with the output, if the process
 * exits, and after `timeoutMs` otherwise.
 * @param {ServiceProcess} service
 * @param {{ timeoutMs?: number }} [options]
 * @returns {Promise<void>}
 */
export async function waitUntilReady(service, { timeoutMs = 60_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = service.exitStatus();
    if (status) {
      throw new Error(
        `${service.name} exited (${status.code ?? status.signal}) before it was ready:\n${outputTail(service)}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(`${service.name} not ready after ${timeoutMs} ms:\n${outputTail(service)}`);
    }
    const ready = await fetch(`${service.url}/health/ready`, {
      signal: AbortSignal.timeout(1000),
    }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return;
    await sleep(50);
  }
}

/**
 * Polls `check` until it resolves true; fails after `timeoutMs` with `what` in the message.
 * @param {string} what
 * @param {() => Promise<boolean>} check
 * @returns {Promise<void>}
 */
export async function waitFor(what, check, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}
