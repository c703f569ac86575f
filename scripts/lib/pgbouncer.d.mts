export interface PgBouncer {
  /** The target URL with its host and port replaced by PgBouncer's */
  url: string;
  port: number;
  pid: number | undefined;
  output(): string;
  stop(): Promise<void>;
}

export function pgbouncerPath(): string | undefined;
export function startPgBouncer(options: {
  targetUrl: string;
  settings?: Record<string, string | number>;
}): Promise<PgBouncer>;
