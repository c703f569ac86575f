export interface PatroniTimings {
  /** Seconds the leader key lives without renewal. */
  ttl: number;
  /** Seconds between two runs of each member's HA loop. */
  loop_wait: number;
  /** Seconds Patroni retries etcd and PostgreSQL operations before giving up. */
  retry_timeout: number;
}

export interface PatroniMember {
  name: string;
  restPort: number;
  pgPort: number;
  /** http://127.0.0.1:REST_PORT */
  restUrl: string;
  dataDir: string;
  /** The Patroni daemon's PID. */
  pid: number | undefined;
  output(): string;
  running(): boolean;
  postmasterPid(): number | undefined;
  /** postgres://postgres@127.0.0.1:PG_PORT/DATABASE (trust auth), straight to this member. */
  url(database?: string): string;
  status(): Promise<{ role?: string; state?: string; timeline?: number } | undefined>;
  walReceiverPid(): Promise<number | undefined>;
  /** SIGKILL to Patroni, its postmaster and the postmaster's children; resolves with their PIDs. */
  kill(): Promise<number[]>;
  stop(): Promise<void>;
}

export interface TopologyMember {
  name: string;
  role: 'leader' | 'sync_standby' | 'replica' | string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

export interface PatroniCluster {
  scope: string;
  timings: PatroniTimings;
  members: PatroniMember[];
  topology(): Promise<TopologyMember[]>;
  primary(): Promise<PatroniMember | undefined>;
  waitForPrimary(options?: {
    exclude?: PatroniMember;
    withSyncStandby?: boolean;
    timeoutMs?: number;
  }): Promise<PatroniMember>;
  switchover(
    leader: PatroniMember,
    candidate: PatroniMember,
  ): Promise<{ status: number; text: string }>;
  replace(lost: PatroniMember, options?: { timeoutMs?: number }): Promise<PatroniMember>;
  stop(): Promise<void>;
}

export const FAST_TIMINGS: PatroniTimings;
export function patroniPath(): string | undefined;
export function missingFailoverTools(): string[];
export function startPatroniCluster(options: {
  etcdUrl: string;
  database: string;
  members?: number;
  scope?: string;
  timings?: PatroniTimings;
  parameters?: Record<string, string | number>;
  timeoutMs?: number;
}): Promise<PatroniCluster>;
