// One member of a throwaway Patroni cluster (scripts/lib/patroni.mjs): its configuration, its
// Patroni daemon on free 127.0.0.1 ports (REST API and PostgreSQL) with its data in a temp
// directory, run as the `postgres` OS user (PostgreSQL refuses root), stopped by PID. The failover
// test injects faults through the PIDs it reads here: the Patroni daemon, its postmaster and the
// postmaster's children (a node loss), the WAL receiver (a standby cut off from the leader).
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { freePorts } from './ports.mjs';
import { alive, childPids, gone, signal } from './process-tree.mjs';
import { findPostgresBin, serviceTempDir, startDaemon } from './system-tools.mjs';

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
 * @typedef {object} MemberOptions
 * @property {string} scope
 * @property {string} name
 * @property {string} etcdUrl
 * @property {PatroniTimings} timings
 * @property {Record<string, string | number>} parameters
 * @property {RegExp} [watchLog] Log lines (Patroni's and PostgreSQL's) to keep, however many.
 */

/**
 * GET on a member's REST API: the status and the JSON body (undefined when it is not JSON).
 * @param {string} url
 * @param {number} [timeoutMs]
 * @returns {Promise<{ status: number; body: unknown }>}
 */
export async function getJson(url, timeoutMs = 1000) {
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
 * Starts one member: `patroni` is the binary, `ports` the REST API's and PostgreSQL's (free ones
 * when not given).
 * @param {MemberOptions & { patroni: string; ports?: [number, number] }} options
 * @returns {Promise<PatroniMember>}
 */
export async function startMember({
  patroni,
  scope,
  name,
  etcdUrl,
  timings,
  parameters,
  watchLog,
  ports,
}) {
  const [restPort, pgPort] = ports ?? (await freePorts(2));
  const { dir, remove } = await serviceTempDir(`users-service-patroni-${name}-`);
  const config = memberConfig({ scope, name, dir, restPort, pgPort, etcdUrl, timings, parameters });
  const file = path.join(dir, 'patroni.yml');
  // JSON is YAML; readable by the `postgres` user Patroni runs as.
  await writeFile(file, JSON.stringify(config, null, 2), { mode: 0o644 });
  const daemon = startDaemon(patroni, [file], {
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
      if (!(await gone(victims, 10_000))) {
        throw new Error(`${name}: processes still alive after SIGKILL`);
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
      if (!(await gone([postmaster], 10_000))) {
        throw new Error(`${name}: postmaster alive after SIGKILL`);
      }
      return postmaster;
    },
    /** Stops Patroni (which stops PostgreSQL), then anything of the node left, and removes it. */
    async stop() {
      const before = postmasterPid();
      await daemon.stop('SIGTERM', 20_000);
      // Read again: a Patroni restarting a crashed PostgreSQL as it was stopped can leave the new
      // postmaster running, still listening on the node's port, which the node's replacement
      // then cannot bind.
      for (const postmaster of new Set([before, postmasterPid()])) {
        if (!postmaster || !alive(postmaster)) continue;
        for (const pid of [postmaster, ...childPids(postmaster)]) signal(pid, 'SIGKILL');
        await gone([postmaster], 10_000);
      }
      await remove();
    },
  };
  return member;
}
