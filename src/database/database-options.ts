import type { DataSourceOptions } from 'typeorm';
import { CreateUsersAndPosts1718000000000 } from '../../migrations/1718000000000-CreateUsersAndPosts.js';
import type { DatabaseSettings } from '../config/app-config.js';
import { Post } from '../posts/post.entity.js';
import { User } from '../users/user.entity.js';

export const entities = [User, Post];

/**
 * The single source of database settings: the Nest DatabaseModule, the TypeORM CLI and the tests
 * all build their connection from it. Migrations are listed as classes, not globs, so the same list
 * works from TypeScript sources (Jest) and from dist (the service and the CLI).
 */
export function dataSourceOptions(db: DatabaseSettings): DataSourceOptions {
  return {
    type: 'postgres',
    url: db.url,
    entities,
    migrations: [CreateUsersAndPosts1718000000000],
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: db.migrateOnBoot,
    connectTimeoutMS: db.connectTimeoutMs,
    poolSize: db.poolSize,
    extra: {
      // Every query gives up server-side after this long, so a stuck statement cannot hold a
      // pooled connection (and a client) forever.
      statement_timeout: db.statementTimeoutMs || undefined,
    },
    // Names the service's connections in pg_stat_activity.
    applicationName: 'users-service',
  };
}
