// A throwaway Patroni cluster for the failover test (Debian's patroni, etcd-server and PostgreSQL
// binaries): its members (scripts/lib/patroni-member.mjs) on one etcd in synchronous mode, the
// timings that make a failover take seconds, and the tools it needs.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { etcdPath } from './etcd.mjs';
import { haproxyPath } from './haproxy.mjs';
import { getJson, startMember } from './patroni-member.mjs';
import { findPostgresBin, findTool } from './system-tools.mjs';

/**
 * @typedef {import('./patroni-member.mjs').PatroniTimings} PatroniTimings
 * @typedef {import('./patroni-member.mjs').PatroniMember} PatroniMember
 * @typedef {import('./patroni-member.mjs').PatroniStatus} PatroniStatus GET /patroni: a member's own
 *   view of itself.
 * @typedef {import('./patroni-member.mjs').MemberOptions} MemberOptions
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
  const patroni = patroniPath();
  if (!patroni) throw new Error('patroni is not installed (Debian: apt-get install patroni)');
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
        patroni,
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
        await startMember({
          patroni,
          scope,
          name: `pg${i}`,
          etcdUrl,
          timings,
          parameters,
          watchLog,
        }),
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
