import type { DataSourceOptions } from 'typeorm';
import { CreateUsersAndPosts1718000000000 } from '../../migrations/1718000000000-CreateUsersAndPosts.js';
import { AddUsersRoleIndex1718000000001 } from '../../migrations/1718000000001-AddUsersRoleIndex.js';
import { ListCountsAndKeysetIndexes1718000000002 } from '../../migrations/1718000000002-ListCountsAndKeysetIndexes.js';
import { VersionsAndIdempotencyKeys1718000000003 } from '../../migrations/1718000000003-VersionsAndIdempotencyKeys.js';
import { IdempotencyKey } from '../idempotency/idempotency-key.entity.js';
import type { DatabaseSettings } from '../config/app-config.js';
import { Post } from '../posts/post.entity.js';
import { User } from '../users/user.entity.js';

export const entities = [User, Post, IdempotencyKey];

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
    migrations: [
      CreateUsersAndPosts1718000000000,
      AddUsersRoleIndex1718000000001,
      ListCountsAndKeysetIndexes1718000000002,
      VersionsAndIdempotencyKeys1718000000003,
    ],
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: db.migrateOnBoot,
    connectTimeoutMS: db.connectTimeoutMs,
    poolSize: db.poolSize,
    extra: {
      // Every query gives up server-side after this long, so a stuck statement cannot hold a
      // pooled connection (and a client) forever.
      statement_timeout: db.statementTimeoutMs || undefined,
      // The service's statements are small; a parallel plan for a large count was measured slower
      // than a serial one on a 2-core server (62 ms vs 41 ms) and takes workers from other queries.
      options: '-c max_parallel_workers_per_gather=0',
    },
    // Names the service's connections in pg_stat_activity.
    applicationName: 'users-service',
  };
}
