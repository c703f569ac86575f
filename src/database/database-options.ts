import { readFileSync } from 'node:fs';
import type { DataSourceOptions } from 'typeorm';
import { databaseClient } from './database-client.js';
import { CreateUsersAndPosts1718000000000 } from '../../migrations/1718000000000-CreateUsersAndPosts.js';
import { AddUsersRoleIndex1718000000001 } from '../../migrations/1718000000001-AddUsersRoleIndex.js';
import { ListCountsAndKeysetIndexes1718000000002 } from '../../migrations/1718000000002-ListCountsAndKeysetIndexes.js';
import { VersionsAndIdempotencyKeys1718000000003 } from '../../migrations/1718000000003-VersionsAndIdempotencyKeys.js';
import { RuntimeRolePrivileges1718000000004 } from '../../migrations/1718000000004-RuntimeRolePrivileges.js';
import { UserChanges1718000000005 } from '../../migrations/1718000000005-UserChanges.js';
import { UserChangesResetFloor1718000000006 } from '../../migrations/1718000000006-UserChangesResetFloor.js';
import { UserChangesPurgeFunction1718000000007 } from '../../migrations/1718000000007-UserChangesPurgeFunction.js';
import { ScimUserColumns1718000000010 } from '../../migrations/1718000000010-ScimUserColumns.js';
import { ScimGroups1718000000011 } from '../../migrations/1718000000011-ScimGroups.js';
import { UsersActiveCounts1718000000012 } from '../../migrations/1718000000012-UsersActiveCounts.js';
import { UserGroupFunctions1718000000013 } from '../../migrations/1718000000013-UserGroupFunctions.js';
import { ScimLookupFunctions1718000000014 } from '../../migrations/1718000000014-ScimLookupFunctions.js';
import type { DatabaseSettings } from '../config/app-config.js';

/** The PEM CA of DB_CA_FILE; an error naming the setting when it cannot be read or holds none. */
function caOf(file: string): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`DB_CA_FILE: cannot read ${file} (${(error as { code?: string }).code})`, {
      cause: error,
    });
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error(`DB_CA_FILE: ${file} holds no PEM certificate`);
  }
  return pem;
}

/** pg Pool and Client settings shared by the primary's pool and the replicas' pools. */
export function poolOptions(
  db: Pick<
    DatabaseSettings,
    'connectTimeoutMs' | 'statementTimeoutMs' | 'keepAliveIdleS' | 'maxLifetimeS' | 'caFile'
  >,
  { requireWritable }: { requireWritable: boolean },
) {
  return {
    Client: databaseClient(db.statementTimeoutMs, {
      requireWritable,
      abandonAfterMs: db.connectTimeoutMs,
    }),
    keepAlive: db.keepAliveIdleS > 0,
    keepAliveInitialDelayMillis: db.keepAliveIdleS * 1000,
    maxLifetimeSeconds: db.maxLifetimeS,
    // sslmode=verify-full: the chain must lead to this CA and the certificate must name the host
    // (Node's defaults once a CA is given). The URLs carry no ssl parameter (validateEnv): pg
    // would let them override this.
    ssl: db.caFile ? { ca: caOf(db.caFile) } : undefined,
  };
}

/**
 * The single source of database settings: the Nest DatabaseModule, the TypeORM CLI and the tests
 * all build their connection from it. Migrations are listed as classes, not globs, so the same list
 * works from TypeScript sources (Jest) and from dist (the service and the CLI). The service registers
 * its entities through its feature modules; the CLI names them (src/data-source.ts).
 */
export function dataSourceOptions(
  db: DatabaseSettings,
  entities: DataSourceOptions['entities'] = [],
): DataSourceOptions {
  return {
    type: 'postgres',
    url: db.url,
    entities,
    migrations: [
      CreateUsersAndPosts1718000000000,
      AddUsersRoleIndex1718000000001,
      ListCountsAndKeysetIndexes1718000000002,
      VersionsAndIdempotencyKeys1718000000003,
      RuntimeRolePrivileges1718000000004,
      UserChanges1718000000005,
      UserChangesResetFloor1718000000006,
      UserChangesPurgeFunction1718000000007,
      ScimUserColumns1718000000010,
      ScimGroups1718000000011,
      UsersActiveCounts1718000000012,
      UserGroupFunctions1718000000013,
      ScimLookupFunctions1718000000014,
    ],
    // Applied by runMigrations (migrations.ts) in one transaction under an advisory lock, never by
    // DataSource.initialize: see MigrationsOnBoot and the CLI's data source.
    migrationsTransactionMode: 'all',
    synchronize: false,
    migrationsRun: false,
    connectTimeoutMS: db.connectTimeoutMs,
    poolSize: db.poolSize,
    // Passed to pg's Pool and to each Client it opens. No startup parameters (statement_timeout,
    // options) and no session state: PgBouncer in transaction pooling rejects the former and does
    // not keep the latter. The Client bounds every query, never cuts a commit short, backs off
    // connection attempts while the database is unreachable and refuses a read-only node or a
    // server-side statement timeout (see databaseClient); the rest are the pool settings of
    // docs/failover.md.
    extra: poolOptions(db, { requireWritable: true }),
    // Names the service's connections in pg_stat_activity.
    applicationName: 'users-service',
  };
}
