export interface Haproxy {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  pid: number | undefined;
  output(): string;
  stop(): Promise<void>;
}

export function haproxyPath(): string | undefined;
export function startHaproxy(options: { backends: number[] }): Promise<Haproxy>;
