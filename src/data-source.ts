import { DataSource, type Migration } from 'typeorm';
import { AppConfig, loadEnv } from './config/app-config.js';
import { dataSourceOptions } from './database/database-options.js';
import { runMigrations } from './database/migrations.js';
import { Group } from './groups/group.entity.js';
import { GroupMember } from './groups/group-member.entity.js';
import { IdempotencyKey } from './idempotency/idempotency-key.entity.js';
import { ListCount } from './lists/list-count.entity.js';
import { Post } from './posts/post.entity.js';
import { User } from './users/user.entity.js';
import { UserChange } from './changes/user-change.entity.js';
import { UserChangesWatermark } from './changes/user-changes-watermark.entity.js';

/** Every table the service maps (the service itself registers them through its modules). */
const entities = [
  User,
  Post,
  IdempotencyKey,
  ListCount,
  UserChange,
  UserChangesWatermark,
  Group,
  GroupMember,
];

/**
 * The TypeORM CLI's data source: `migration:run` calls runMigrations() on it, which here takes
 * the same advisory lock as the service's boot-time run (migrations.ts).
 */
class LockedMigrationsDataSource extends DataSource {
  override runMigrations(): Promise<Migration[]> {
    return runMigrations(this);
  }
}

// The TypeORM CLI (`npm run migration:run`, `typeorm -d dist/src/data-source.js`) loads
// this module's default export. It uses the same settings as the service, from DATABASE_URL.
function cliDataSource(): DataSource {
  const env = loadEnv();
  if (!env.DATABASE_URL) {
    throw new Error('DATABASE_URL must be set for the TypeORM CLI (npm run migration:*)');
  }
  // A migration may rewrite a large table: the service's per-query timeout does not apply.
  const database = { ...AppConfig.fromEnv(env).database, statementTimeoutMs: 0 };
  return new LockedMigrationsDataSource(dataSourceOptions(database, entities));
}

export default cliDataSource();
