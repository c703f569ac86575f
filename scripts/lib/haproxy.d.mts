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
