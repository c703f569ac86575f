// The cluster of the failover specs (test/topology/failover.e2e-spec.ts, switchover.e2e-spec.ts)
// on real parts: one etcd, two Patroni members (PostgreSQL 15) in synchronous mode, HAProxy
// sending connections to whichever member Patroni's REST API reports as primary, and the built
// service reaching PostgreSQL through HAProxy only; with the bounds on a recovery that Patroni's
// and HAProxy's timings give. A spec calls useFailoverCluster() once; Jest gives every test file
// its own copy of this module, so `cluster`, `service` and `servicePid` (live bindings) are that
// file's own. The faults are run under load by test/topology/failover-under-load.ts.
import { startEtcd, type Etcd } from '../../scripts/lib/etcd.mjs';
import {
  PRIMARY_CHECKS,
  startPrimaryProxy,
  type PrimaryProxy,
} from '../../scripts/lib/haproxy.mjs';
import {
  FAST_TIMINGS,
  missingFailoverTools,
  startPatroniCluster,
  type PatroniCluster,
  type PatroniMember,
} from '../../scripts/lib/patroni.mjs';
import { CONNECT_BACKOFF_MAX_MS } from '../../src/database/connection-gate.js';
import { FAILOVER_RETRY_MAX_MS } from '../../src/database/failover-retry.js';
import {
  buildService,
  type ServiceProcess,
  startReadyService,
  waitFor,
} from './service-process.js';
import { CANCELLED_WAIT } from './sync-standby.js';
import { describeWhenInstalled } from './when-installed.js';

export const DATABASE = 'users_failover';
/** The service's statement timeout: the standby partition of the failover spec outlasts it. */
export const STATEMENT_TIMEOUT_MS = 2000;
export const CONNECT_TIMEOUT_MS = 1000;
/** How long the service retries a keyed create after a failover error (its default). */
export const FAILOVER_RETRY_MS = 10_000;
/** How many times a spec injects its faults in a row (FAILOVER_ROUNDS, default 1). */
export const ROUNDS = Math.max(1, Number(process.env.FAILOVER_ROUNDS ?? 1));
/** PostgreSQL's log line at the end of its start: the proof that a member's log is watched. */
export const READY = /database system is ready to accept connections/;

const { ttl, loop_wait: loopWait, retry_timeout: retryTimeout } = FAST_TIMINGS;
/**
 * HAProxy takes the old primary out within inter + (fall - 1) * fastinter of Patroni no longer
 * reporting it, and puts the new one in within rise * downinter of Patroni reporting it.
 */
const HAPROXY_MS =
  PRIMARY_CHECKS.interMs +
  (PRIMARY_CHECKS.fall - 1) * PRIMARY_CHECKS.fastInterMs +
  PRIMARY_CHECKS.rise * PRIMARY_CHECKS.downInterMs;
/**
 * What the service adds once the new primary is reachable: its connection attempts back off (at
 * most CONNECT_BACKOFF_MAX_MS apart), and a keyed create waits at most FAILOVER_RETRY_MAX_MS
 * between two attempts (less when the pool reconnects).
 */
const SERVICE_MS = CONNECT_BACKOFF_MAX_MS + FAILOVER_RETRY_MAX_MS;
/** Beyond the service's own: a client's retry after a 503, a statement on a dead connection. */
const CLIENT_SLACK_MS = 3000;
/** A node loss: the leader key expires after ttl, a loop later the sync standby promotes. */
export const NODE_LOSS_BOUND_MS =
  (ttl + loopWait + retryTimeout) * 1000 + HAPROXY_MS + SERVICE_MS + CLIENT_SLACK_MS;
/**
 * A PostgreSQL crash with primary_start_timeout 0: the leader's Patroni finds it on its next loop
 * and releases the leader key, the sync standby promotes within about a loop more. No client
 * retry: every create in flight is retried by the service. With the test's timings:
 * 2 + 0.85 + 2 = 4.85 s.
 */
export const CRASH_BOUND_MS = 2 * loopWait * 1000 + HAPROXY_MS + SERVICE_MS;
/**
 * The longest time without a successful request across a planned switchover: Patroni needs 1 to
 * 2 s from the request to a new primary (docs/failover.md, Measured), HAProxy and the service
 * add well under a second.
 */
export const SWITCHOVER_STALL_MS = 3000;
/** A switchover's recovery: the leader demotes on its next loop, the candidate promotes on its next. */
export const SWITCHOVER_BOUND_MS = (2 * loopWait + retryTimeout) * 1000 + HAPROXY_MS + SERVICE_MS;

export let cluster: PatroniCluster | undefined;
export let service: ServiceProcess | undefined;
/** The service's process id once it was ready: a fault must not have restarted it. */
export let servicePid: number;
let etcd: Etcd | undefined;
let proxy: PrimaryProxy | undefined;

/**
 * `describe(name, suite)` where patroni, etcd, haproxy and PostgreSQL 15 are installed; elsewhere
 * a skip that says so (.ci/run installs them).
 */
export function describeFailover(name: string, suite: () => void): void {
  describeWhenInstalled(
    name,
    missingFailoverTools(),
    'apt-get install patroni etcd-server haproxy postgresql-15',
    suite,
  );
}

/** A scenario's label, with its round when FAILOVER_ROUNDS asks for more than one. */
export const roundLabel = (name: string, round: number) => (ROUNDS > 1 ? `${name}-${round}` : name);

/** Starts the spec's cluster, HAProxy and service before its tests and stops them after them. */
export function useFailoverCluster(): void {
  beforeAll(async () => {
    const started = Date.now();
    buildService();
    etcd = await startEtcd();
    cluster = await startPatroniCluster({
      etcdUrl: etcd.url,
      database: DATABASE,
      watchLog: new RegExp(`${CANCELLED_WAIT.source}|${READY.source}`, 'i'),
    });
    const clusterMs = Date.now() - started;
    proxy = await startPrimaryProxy({ members: cluster.members, checks: PRIMARY_CHECKS });
    await waitForProxyOn(await cluster.waitForPrimary());
    service = await startReadyService({
      DATABASE_URL: proxy.url(DATABASE),
      MIGRATE_ON_BOOT: 'true',
      LOG_LEVEL: 'warn',
      DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      IDEMPOTENCY_WAIT_MS: String(STATEMENT_TIMEOUT_MS / 2),
      DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      DB_FAILOVER_RETRY_MS: String(FAILOVER_RETRY_MS),
    });
    servicePid = service.pid;
    console.log(
      `failover setup: Patroni cluster with a sync standby in ${clusterMs} ms, service ready ` +
        `through HAProxy ${Date.now() - started} ms after the start; ${ROUNDS} round(s)`,
    );
  }, 150_000);

  afterAll(async () => {
    await service?.stop();
    await proxy?.stop();
    await cluster?.stop();
    await etcd?.stop();
  }, 60_000);
}

/** Until HAProxy has `primary` UP and every other member DOWN. */
export async function waitForProxyOn(primary: PatroniMember, timeoutMs = 20_000) {
  await waitFor(
    `HAProxy on ${primary.name} only`,
    async () => {
      const states = await proxy!.serverStates();
      return Object.entries(states).every(([name, state]) =>
        name === primary.name ? state === 'UP' : state.startsWith('DOWN'),
      );
    },
    timeoutMs,
  );
}

/** Whether the service answers GET /health/ready with 200. */
export async function ready(): Promise<boolean> {
  const response = await fetch(`${service!.url}/health/ready`, {
    signal: AbortSignal.timeout(2000),
  });
  return response.status === 200;
}

/** The member that is not `primary`, which a scenario lost: back as a fresh node (empty disk). */
export const replaceLost = (primary: PatroniMember) =>
  cluster!.replace(cluster!.members.find((m) => m !== primary)!);
