export interface ClusterServer {
  /** postgres://postgres@127.0.0.1:PORT/DATABASE (trust auth) */
  url: string;
  port: number;
  pid: number | undefined;
  output(): string;
  running(): boolean;
  /** Fast shutdown; the data directory stays until stop(). */
  halt(): Promise<void>;
  /** Fast shutdown and removal of the data directory. */
  stop(): Promise<void>;
}

export interface Primary extends ClusterServer {
  startStandby(options?: { prefix?: string }): Promise<ClusterServer>;
}

export function postgresBinForReplicas(): string | undefined;
export function startPrimary(options: { database: string; prefix?: string }): Promise<Primary>;
