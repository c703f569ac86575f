// A throwaway Patroni cluster for the failover test (Debian's patroni, etcd-server and PostgreSQL
// binaries): members on free 127.0.0.1 ports (REST API and PostgreSQL), each with its data in a
// temp directory, run as the `postgres` OS user (PostgreSQL refuses root), stopped by PID. The
// test injects faults through the PIDs it reads here: the Patroni daemon, its postmaster and the
// postmaster's children (a node loss), the WAL receiver (a standby cut off from the leader).
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { etcdPath } from './etcd.mjs';
import { haproxyPath } from './haproxy.mjs';
import { freePorts } from './ports.mjs';
import { findPostgresBin, findTool, serviceTempDir, startDaemon } from './system-tools.mjs';

/**
 * @typedef {object} PatroniTimings
 * @property {number} ttl Seconds the leader key lives without renewal.
 * @property {number} loop_wait Seconds between two runs of each member's HA loop.
 * @property {number} retry_timeout Seconds Patroni retries etcd and PostgreSQL operations before
 *   giving up.
 * @property {number} primary_start_timeout Seconds a leader whose PostgreSQL crashed may take to
 *   start it again before it hands over to a synchronous standby; 0: it hands over at once.
 */

/**
 * @typedef {object} PatroniMember
 * @property {string} name
 * @property {number} restPort
 * @property {number} pgPort
 * @property {string} restUrl http://127.0.0.1:REST_PORT
 * @property {string} dataDir
 * @property {number | undefined} pid The Patroni daemon's PID.
 * @property {() => string} output
 * @property {() => string[]} watched The log lines matching the cluster's `watchLog`.
 * @property {() => boolean} running
 * @property {() => number | undefined} postmasterPid
 * @property {(database?: string) => string} url postgres://postgres@127.0.0.1:PG_PORT/DATABASE
 *   (trust auth), straight to this member.
 * @property {() => Promise<PatroniStatus | undefined>} status
 * @property {() => Promise<number | undefined>} walReceiverPid
 * @property {() => Promise<number[]>} kill SIGKILL to Patroni, its postmaster and the
 *   postmaster's children; resolves with their PIDs.
 * @property {() => Promise<number>} killPostmaster SIGKILL to the postmaster only (a PostgreSQL
 *   crash; Patroni keeps running); resolves with its PID.
 * @property {() => Promise<void>} stop
 */

/**
 * @typedef {object} PatroniStatus GET /patroni: a member's own view of itself.
 * @property {string} [role]
 * @property {string} [state]
 * @property {number} [timeline]
 */

/**
 * @typedef {object} TopologyMember
 * @property {string} name
 * @property {'leader' | 'sync_standby' | 'replica' | string} role
 * @property {string} state
 * @property {number} [timeline]
 * @property {number | string} [lag]
 */

/**
 * @typedef {object} PatroniCluster
 * @property {string} scope
 * @property {PatroniTimings} timings
 * @property {PatroniMember[]} members
 * @property {() => Promise<TopologyMember[]>} topology
 * @property {() => Promise<PatroniMember | undefined>} primary
 * @property {(options?: {
 *   exclude?: PatroniMember;
 *   withSyncStandby?: boolean;
 *   timeoutMs?: number;
 * }) => Promise<PatroniMember>} waitForPrimary
 * @property {(
 *   leader: PatroniMember,
 *   candidate: PatroniMember,
 * ) => Promise<{ status: number; text: string }>} switchover
 * @property {(lost: PatroniMember, options?: { timeoutMs?: number }) => Promise<PatroniMember>} replace
 * @property {() => Promise<void>} stop
 */

/**
 * @typedef {object} MemberOptions
 * @property {string} scope
 * @property {string} name
 * @property {string} etcdUrl
 * @property {PatroniTimings} timings
 * @property {Record<string, string | number>} parameters
 * @property {RegExp} [watchLog] Log lines (Patroni's and PostgreSQL's) to keep, however many.
 */

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The patroni binary, or undefined when it is not installed.
 * @returns {string | undefined}
 */
export function patroniPath() {
  return findTool('patroni');
}

/**
 * What the failover test needs and this machine lacks (empty when it can run).
 * @returns {string[]}
 */
export function missingFailoverTools() {
  return /** @type {[string, string | undefined][]} */ ([
    ['patroni', patroniPath()],
    ['etcd-server', etcdPath()],
    ['haproxy', haproxyPath()],
    ['postgresql-15', findPostgresBin('pg_basebackup')],
  ])
    .filter(([, found]) => !found)
    .map(([name]) => name);
}

/**
 * Short timings so that a failover takes seconds: the leader key lives `ttl` seconds, each member
 * runs its HA loop every `loop_wait` seconds, and gives up on etcd or PostgreSQL after
 * `retry_timeout` (Patroni wants loop_wait + 2 * retry_timeout <= ttl). A leader whose PostgreSQL
 * crashed hands over to the synchronous standby at once (`primary_start_timeout: 0`) rather than
 * restarting it in place (default: for up to 300 s), as docs/failover.md recommends with
 * synchronous replication: the standby has every acknowledged commit.
 * @type {PatroniTimings}
 */
export const FAST_TIMINGS = { ttl: 10, loop_wait: 1, retry_timeout: 4, primary_start_timeout: 0 };

/**
 * @param {number} pid
 * @param {NodeJS.Signals} name
 * @returns {boolean}
 */
function signal(pid, name) {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false; // already gone
  }
}

/**
 * PIDs whose parent is `parent` (read from /proc), e.g. a postmaster's backends.
 * @param {number} parent
 * @returns {number[]}
 */
function childPids(parent) {
  /** @type {number[]} */
  const children = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may hold spaces and parentheses: split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      // exited while we read
    }
  }
  return children;
}

/**
 * @param {number} pid
 * @returns {boolean}
 */
function alive(pid) {
  try {
    process.kill(pid, 0);
    // A zombie still answers signal 0 but has stopped running.
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * @param {string} url
 * @param {number} [timeoutMs]
 * @returns {Promise<{ status: number; body: unknown }>}
 */
async function getJson(url, timeoutMs = 1000) {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

/**
 * @param {MemberOptions & { dir: string; restPort: number; pgPort: number }} options
 */
function memberConfig({ scope, name, dir, restPort, pgPort, etcdUrl, timings, parameters }) {
  const host = '127.0.0.1';
  return {
    scope,
    name,
    log: { level: 'INFO' },
    restapi: { listen: `${host}:${restPort}`, connect_address: `${host}:${restPort}` },
    etcd3: { hosts: [new URL(etcdUrl).host] },
    bootstrap: {
      dcs: {
        ...timings,
        // Commits wait for the synchronous standby, and only that standby may be promoted.
        synchronous_mode: true,
        // In synchronous mode the sync standby holds every acknowledged commit, whatever its
        // replay lag in bytes; the default 1 MB would forbid promoting it after a burst of writes.
        maximum_lag_on_failover: 64 * 1024 * 1024,
        postgresql: {
          use_pg_rewind: false,
          use_slots: true,
          parameters: {
            // A throwaway cluster: the test kills processes, never the machine, so the OS keeps
            // every write. wal_sender_timeout stays at its default (60 s): a frozen standby
            // keeps its walsender "streaming" well past the test's partition.
            fsync: 'off',
            full_page_writes: 'off',
            max_connections: 100,
            max_wal_senders: 10,
            max_replication_slots: 10,
            wal_keep_size: '128MB',
            ...parameters,
          },
        },
      },
      initdb: [{ encoding: 'UTF8' }, 'no-sync'],
    },
    postgresql: {
      listen: `${host}:${pgPort}`,
      connect_address: `${host}:${pgPort}`,
      data_dir: path.join(dir, 'data'),
      bin_dir: findPostgresBin('pg_basebackup'),
      pgpass: path.join(dir, 'pgpass'),
      // Trust on loopback only: no password to manage in a throwaway cluster.
      pg_hba: [
        'local all all trust',
        `host all all ${host}/32 trust`,
        `host replication all ${host}/32 trust`,
      ],
      authentication: {
        superuser: { username: 'postgres' },
        replication: { username: 'postgres' },
      },
      // The socket lives in the member's own directory, not in a shared /tmp or /run.
      parameters: { unix_socket_directories: dir },
    },
    tags: { nofailover: false, noloadbalance: false, clonefrom: false },
  };
}

/**
 * @param {MemberOptions & { ports?: [number, number] }} options
 * @returns {Promise<PatroniMember>}
 */
async function startMember({ scope, name, etcdUrl, timings, parameters, watchLog, ports }) {
  const [restPort, pgPort] = ports ?? (await freePorts(2));
  const { dir, remove } = await serviceTempDir(`users-service-patroni-${name}-`);
  const config = memberConfig({ scope, name, dir, restPort, pgPort, etcdUrl, timings, parameters });
  const file = path.join(dir, 'patroni.yml');
  // JSON is YAML; readable by the `postgres` user Patroni runs as.
  await writeFile(file, JSON.stringify(config, null, 2), { mode: 0o644 });
  // Defined: startPatroniCluster checked that patroni is installed.
  const daemon = startDaemon(/** @type {string} */ (patroniPath()), [file], {
    name: `patroni ${name}`,
    env: { PATH: process.env.PATH, HOME: dir, LANG: 'C.UTF-8' },
    watch: watchLog,
  });
  const restUrl = `http://127.0.0.1:${restPort}`;
  const dataDir = config.postgresql.data_dir;

  /** The postmaster's PID from postmaster.pid, or undefined while PostgreSQL is down. */
  const postmasterPid = () => {
    try {
      const pid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return pid > 0 && alive(pid) ? pid : undefined;
    } catch {
      return undefined;
    }
  };

  /** @type {PatroniMember} */
  const member = {
    name,
    restPort,
    pgPort,
    restUrl,
    dataDir,
    pid: daemon.pid,
    output: daemon.output,
    watched: daemon.watched,
    running: daemon.running,
    postmasterPid,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${pgPort}/${database}`,
    /** GET /patroni: this member's own view (role, state, timeline, …). */
    status: async () =>
      /** @type {PatroniStatus | undefined} */ ((await getJson(`${restUrl}/patroni`)).body),
    /** The WAL receiver's PID on this (standby) member, or undefined. */
    async walReceiverPid() {
      const client = new pg.Client({
        connectionString: member.url(),
        connectionTimeoutMillis: 2000,
      });
      await client.connect();
      try {
        const { rows } = await client.query('SELECT pid FROM pg_stat_wal_receiver');
        return rows[0]?.pid ?? undefined;
      } finally {
        await client.end();
      }
    },
    /**
     * The node dies at once, as a lost machine does: SIGKILL to Patroni, its postmaster and every
     * child of the postmaster (backends, walsenders), read before any of them is signalled.
     */
    async kill() {
      const postmaster = postmasterPid();
      // Undefined only if the spawn failed; signal() and alive() then take it as already gone.
      const victims = [
        /** @type {number} */ (daemon.pid),
        ...(postmaster ? [postmaster, ...childPids(postmaster)] : []),
      ];
      for (const pid of victims) signal(pid, 'SIGKILL');
      await daemon.exited;
      const deadline = Date.now() + 10_000;
      while (victims.some(alive)) {
        if (Date.now() > deadline) throw new Error(`${name}: processes still alive after SIGKILL`);
        await sleep(20);
      }
      return victims;
    },
    /**
     * PostgreSQL crashes, Patroni stays: SIGKILL to the postmaster alone. Its backends notice and
     * exit, closing every client connection; Patroni finds PostgreSQL down on its next HA loop.
     */
    async killPostmaster() {
      const postmaster = postmasterPid();
      if (!postmaster) throw new Error(`${name}: PostgreSQL is not running`);
      signal(postmaster, 'SIGKILL');
      const deadline = Date.now() + 10_000;
      while (alive(postmaster)) {
        if (Date.now() > deadline) throw new Error(`${name}: postmaster alive after SIGKILL`);
        await sleep(20);
      }
      return postmaster;
    },
    /** Stops Patroni (which stops PostgreSQL), then anything of the node left, and removes it. */
    async stop() {
      const postmaster = postmasterPid();
      await daemon.stop('SIGTERM', 20_000);
      if (postmaster && alive(postmaster)) {
        for (const pid of [postmaster, ...childPids(postmaster)]) signal(pid, 'SIGKILL');
        const deadline = Date.now() + 10_000;
        while (alive(postmaster) && Date.now() < deadline) await sleep(20);
      }
      await remove();
    },
  };
  return member;
}

/**
 * Starts a Patroni cluster of `members` nodes on the etcd at `etcdUrl` in synchronous mode, waits
 * until it has a leader serving `database` (created on it) and a streaming synchronous standby.
 * Returns the members and helpers to read the leader and wait for role changes.
 * @param {{
 *   etcdUrl: string;
 *   database: string;
 *   members?: number;
 *   scope?: string;
 *   timings?: PatroniTimings;
 *   parameters?: Record<string, string | number>;
 *   watchLog?: RegExp;
 *   timeoutMs?: number;
 * }} options
 * @returns {Promise<PatroniCluster>}
 */
export async function startPatroniCluster({
  etcdUrl,
  database,
  members: count = 2,
  scope = `users-failover-${process.pid}-${Date.now()}`,
  timings = FAST_TIMINGS,
  parameters = {},
  watchLog,
  timeoutMs = 60_000,
}) {
  if (!patroniPath()) throw new Error('patroni is not installed (Debian: apt-get install patroni)');
  /** @type {PatroniMember[]} */
  const members = [];
  /** @type {PatroniCluster} */
  const cluster = {
    scope,
    timings,
    members,
    /** GET /cluster from the first member that answers: every member's name, role and state. */
    async topology() {
      for (const member of members.filter((m) => m.running())) {
        const reply = await getJson(`${member.restUrl}/cluster`).catch(() => undefined);
        if (reply?.status === 200) {
          return /** @type {{ members: TopologyMember[] }} */ (reply.body).members;
        }
      }
      return [];
    },
    /** The member whose REST API answers 200 on /primary (what HAProxy checks), if one does. */
    async primary() {
      for (const member of members.filter((m) => m.running())) {
        const reply = await getJson(`${member.restUrl}/primary`).catch(() => undefined);
        if (reply?.status === 200) return member;
      }
      return undefined;
    },
    /** Waits until a member other than `exclude` is primary and another one is its sync standby. */
    async waitForPrimary({ exclude, withSyncStandby = true, timeoutMs: wait = 60_000 } = {}) {
      const deadline = Date.now() + wait;
      for (;;) {
        const primary = await cluster.primary();
        if (primary && primary !== exclude) {
          const topology = await cluster.topology();
          const synced = topology.some(
            (m) => m.role === 'sync_standby' && ['running', 'streaming'].includes(m.state),
          );
          if (!withSyncStandby || synced) return primary;
        }
        if (Date.now() > deadline) {
          throw new Error(
            `no primary${withSyncStandby ? ' with a sync standby' : ''} after ${wait} ms: ` +
              `${JSON.stringify(await cluster.topology())}\n` +
              members.map((m) => `--- ${m.name}\n${m.output().slice(-3000)}`).join('\n'),
          );
        }
        await sleep(100);
      }
    },
    /**
     * A planned switchover through the leader's REST API (POST /switchover), to `candidate`.
     * Resolves with the HTTP status and Patroni's answer once the switchover is done or failed.
     */
    async switchover(leader, candidate) {
      const response = await fetch(`${leader.restUrl}/switchover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ leader: leader.name, candidate: candidate.name }),
        signal: AbortSignal.timeout(60_000),
      });
      return { status: response.status, text: await response.text() };
    },
    /**
     * Replaces a lost member by a fresh node of the same name and ports (so HAProxy's server line
     * still names it) and an empty data directory: Patroni clones it from the current leader.
     * Resolves once the cluster has a primary and a streaming sync standby again.
     */
    async replace(lost, { timeoutMs: wait = 60_000 } = {}) {
      await lost.stop();
      const fresh = await startMember({
        scope,
        name: lost.name,
        etcdUrl,
        timings,
        parameters,
        watchLog,
        ports: [lost.restPort, lost.pgPort],
      });
      members[members.indexOf(lost)] = fresh;
      await cluster.waitForPrimary({ exclude: fresh, timeoutMs: wait });
      return fresh;
    },
    async stop() {
      await Promise.all(members.map((member) => member.stop()));
    },
  };
  try {
    // Started together: one wins etcd's initialize key and runs initdb, the others wait for its
    // leader key and clone it with pg_basebackup.
    for (let i = 0; i < count; i++) {
      members.push(
        await startMember({ scope, name: `pg${i}`, etcdUrl, timings, parameters, watchLog }),
      );
    }
    const primary = await cluster.waitForPrimary({ withSyncStandby: count > 1, timeoutMs });
    const admin = new pg.Client({ connectionString: primary.url() });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`).finally(() => admin.end());
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}
