export interface Haproxy {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  pid: number | undefined;
  output(): string;
  /** Each backend server's check status by name (s0, s1, …): UP, DOWN, "UP 1/2", … */
  serverStates(): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

export function haproxyPath(): string | undefined;
export function startHaproxy(options: { backends: number[] }): Promise<Haproxy>;

export interface PrimaryProxy {
  /** postgres://postgres@127.0.0.1:PORT/DATABASE, reaching the current primary only */
  url(database: string): string;
  port: number;
  pid: number | undefined;
  output(): string;
  /** Each member's check status by name: UP, DOWN, "DOWN 1/2", … */
  serverStates(): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

export function startPrimaryProxy(options: {
  members: { name: string; pgPort: number; restPort: number }[];
  checkIntervalMs?: number;
}): Promise<PrimaryProxy>;
