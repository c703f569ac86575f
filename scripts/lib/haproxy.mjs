// HAProxy in front of service processes, routing by readiness as a Kubernetes Service or a mesh
// does: `option httpchk GET /health/ready`, checked every 500 ms, out after 3 failures. And in
// front of Patroni members, sending PostgreSQL connections to the primary (startPrimaryProxy).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { freePorts } from './ports.mjs';
import { findTool, serviceTempDir, startListening } from './system-tools.mjs';

/**
 * @typedef {object} Haproxy
 * @property {string} url http://127.0.0.1:PORT
 * @property {number} port
 * @property {number | undefined} pid
 * @property {() => string} output
 * @property {() => Promise<Record<string, string>>} serverStates Each backend server's check
 *   status by name (s0, s1, …): UP, DOWN, "UP 1/2", …
 * @property {() => Promise<void>} stop
 */

/**
 * @typedef {object} PrimaryProxy
 * @property {(database: string) => string} url postgres://postgres@127.0.0.1:PORT/DATABASE,
 *   reaching the current primary only
 * @property {number} port
 * @property {number | undefined} pid
 * @property {() => string} output
 * @property {() => Promise<Record<string, string>>} serverStates Each member's check status by
 *   name: UP, DOWN, "DOWN 1/2", …
 * @property {() => Promise<void>} stop
 */

/**
 * The haproxy binary, or undefined when it is not installed.
 * @returns {string | undefined}
 */
export function haproxyPath() {
  return findTool('haproxy');
}

/**
 * Starts HAProxy on a free 127.0.0.1 port balancing HTTP over `backends` (127.0.0.1 ports, by
 * round robin; named s0, s1, … in that order). Returns its `url`, `port`, PID, `serverStates()`
 * and `stop()` (stops it, removes its directory).
 * @param {{ backends: number[] }} options
 * @returns {Promise<Haproxy>}
 */
export async function startHaproxy({ backends }) {
  const binary = haproxyPath();
  if (!binary) throw new Error('haproxy is not installed (Debian: apt-get install haproxy)');
  const [port, statsPort] = await freePorts(2);
  const { dir, remove } = await serviceTempDir('users-service-haproxy-');
  const config = [
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    // A connection refused by a process that just stopped is retried on another one; a request
    // that reached a process is never sent twice.
    '  retries 3',
    '  option redispatch',
    '  retry-on conn-failure',
    'frontend web',
    `  bind 127.0.0.1:${port}`,
    '  default_backend service',
    'backend service',
    '  balance roundrobin',
    '  option httpchk GET /health/ready',
    '  default-server check inter 500ms fall 3 rise 2',
    ...backends.map((backendPort, i) => `  server s${i} 127.0.0.1:${backendPort}`),
    // Where a test reads each server's state (serverStates()).
    'frontend stats',
    ...statsSection(statsPort),
  ].join('\n');
  const daemon = await runHaproxy(binary, dir, config, port, remove);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: daemon.pid,
    output: daemon.output,
    /** Each backend server's check status by name (s0, s1, …): UP, DOWN, "UP 1/2", … */
    serverStates: () => serverStates(statsPort, 'service'),
    async stop() {
      await daemon.stop('SIGTERM');
      await remove();
    },
  };
}

/**
 * @typedef {object} PrimaryChecks How HAProxy checks Patroni's REST API (`GET /primary`).
 * @property {number} interMs Between two checks of a server in a steady state (UP or DOWN).
 * @property {number} fastInterMs Between checks of an UP server whose last check failed: the old
 *   primary is out fall - 1 of these after its first failed check.
 * @property {number} downInterMs Between checks of a DOWN server: the new primary is in at most
 *   rise * this after Patroni reports it.
 * @property {number} rise Successful checks that bring a server in.
 * @property {number} fall Failed checks that take it out.
 */

/**
 * Check settings for a primary behind Patroni, as docs/failover.md recommends for production:
 * the old primary is out at most interMs + fastInterMs after Patroni stops answering 200 for it,
 * and one slow check never takes the primary out; the new one is in at most downInterMs after
 * Patroni first reports it. Patroni answers 200 a little before PostgreSQL's promotion ends (about
 * 0.2 s seen here): a connection sent then meets a read-only server, which the service refuses
 * and backs off from for up to a second. rise 2 avoids that but delays every failover by
 * 250-500 ms, and measured longer switchovers here. A few HTTP requests a second per HAProxy to
 * each Patroni REST API.
 * @type {PrimaryChecks}
 */
export const PRIMARY_CHECKS = {
  interMs: 500,
  fastInterMs: 100,
  downInterMs: 250,
  rise: 1,
  fall: 2,
};

/**
 * Starts HAProxy on a free 127.0.0.1 port sending PostgreSQL connections (TCP) to whichever of
 * `members` Patroni's REST API reports as primary (`GET /primary` answers 200 on the leader only),
 * checked as `checks` says. A member marked down has its sessions cut at once
 * (on-marked-down shutdown-sessions), so no client keeps talking to a demoted or isolated server;
 * a connection refused by a member is sent to another one at once (option redispatch 1) rather
 * than to the same one again a second later.
 * Returns its `url(database)`, `port`, PID, `serverStates()` and `stop()`.
 * @param {{
 *   members: { name: string; pgPort: number; restPort: number }[];
 *   checks?: PrimaryChecks;
 * }} options
 * @returns {Promise<PrimaryProxy>}
 */
export async function startPrimaryProxy({ members, checks = PRIMARY_CHECKS }) {
  const binary = haproxyPath();
  if (!binary) throw new Error('haproxy is not installed (Debian: apt-get install haproxy)');
  const [port, statsPort] = await freePorts(2);
  const { dir, remove } = await serviceTempDir('users-service-haproxy-pg-');
  const config = [
    'defaults',
    '  mode tcp',
    '  timeout connect 1s',
    // Pooled connections sit idle between queries: longer than any test.
    '  timeout client 30m',
    '  timeout server 30m',
    '  timeout check 1s',
    '  retries 3',
    '  option redispatch 1',
    'listen postgres',
    `  bind 127.0.0.1:${port}`,
    '  option httpchk GET /primary',
    '  http-check expect status 200',
    `  default-server inter ${checks.interMs}ms fastinter ${checks.fastInterMs}ms ` +
      `downinter ${checks.downInterMs}ms rise ${checks.rise} fall ${checks.fall} ` +
      'on-marked-down shutdown-sessions',
    ...members.map(
      (member) =>
        `  server ${member.name} 127.0.0.1:${member.pgPort} check port ${member.restPort}`,
    ),
    'listen stats',
    '  mode http',
    ...statsSection(statsPort),
  ].join('\n');
  const daemon = await runHaproxy(binary, dir, config, port, remove);
  return {
    /** @param {string} database */
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    port,
    pid: daemon.pid,
    output: daemon.output,
    /** Each member's check status by name: UP, DOWN, "DOWN 1/2", … */
    serverStates: () => serverStates(statsPort, 'postgres'),
    async stop() {
      await daemon.stop('SIGTERM');
      await remove();
    },
  };
}

/**
 * The check status (UP, DOWN, "UP 1/2", …) of each server of the proxy `pxname`, by name, from
 * HAProxy's CSV statistics page.
 * @param {number} statsPort
 * @param {string} pxname
 * @returns {Promise<Record<string, string>>}
 */
async function serverStates(statsPort, pxname) {
  const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
  const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
  const columns = header.split(',');
  /**
   * @param {string} row
   * @param {string} name
   */
  const at = (row, name) => row.split(',')[columns.indexOf(name)];
  return Object.fromEntries(
    rows
      .filter(
        (row) => at(row, 'pxname') === pxname && !/^(FRONTEND|BACKEND)$/.test(at(row, 'svname')),
      )
      .map((row) => [at(row, 'svname'), at(row, 'status')]),
  );
}

/**
 * Where a test reads each server's state (serverStates()).
 * @param {number} statsPort
 */
function statsSection(statsPort) {
  return [`  bind 127.0.0.1:${statsPort}`, '  stats enable', '  stats uri /stats', ''];
}

/**
 * Writes `config` into `dir` and runs HAProxy on it in the foreground (-db: no daemon, stopped by
 * its PID; it runs as whoever runs the test) until it listens on `port`.
 * @param {string} binary
 * @param {string} dir
 * @param {string} config
 * @param {number} port
 * @param {() => Promise<void>} remove
 */
async function runHaproxy(binary, dir, config, port, remove) {
  const file = path.join(dir, 'haproxy.cfg');
  await writeFile(file, config, { mode: 0o644 });
  return startListening(binary, ['-db', '-f', file], {
    name: 'haproxy',
    asUser: false,
    port,
    cleanup: remove,
  });
}
