// Two processes applying migrations at the same moment (replicas with MIGRATE_ON_BOOT=true, or
// the Job beside one) both end up serving and each migration runs exactly once. CONTRACT.md:
// Replicas, PgBouncer, migrations. Each round starts from an empty schema in a database of its own.
import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/database-options.js';
import { runMigrations } from '../src/database/migrations.js';
import {
  buildService,
  startService,
  waitUntilReady,
  type ServiceProcess,
} from './service-process.js';
import { testDatabaseUrl } from './test-app.js';

const ROUNDS = 10;
const DATABASE = 'users_migration_race_test';

describe('migrations applied by two processes at once (e2e)', () => {
  let admin: pg.Client;
  let url: string;
  const migrationCount = dataSourceOptions({ url: 'postgres://x@127.0.0.1/x' } as never).migrations!
    .length;

  async function emptySchema() {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('DROP SCHEMA public CASCADE');
      await client.query('CREATE SCHEMA public');
    } finally {
      await client.end();
    }
  }

  async function appliedMigrations(): Promise<string[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query('SELECT name FROM migrations ORDER BY name')).rows.map(
        (row: { name: string }) => row.name,
      );
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    buildService();
    admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
    await admin.query(`CREATE DATABASE ${DATABASE}`);
    const target = new URL(testDatabaseUrl());
    target.pathname = `/${DATABASE}`;
    url = target.toString();
  });

  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
    await admin.end();
  });

  it(`two service processes with MIGRATE_ON_BOOT=true, ${ROUNDS} rounds: both ready, each migration once`, async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      await emptySchema();
      const env = {
        DATABASE_URL: url,
        MIGRATE_ON_BOOT: 'true',
        LOG_LEVEL: 'warn',
        SHUTDOWN_DRAIN_MS: '0',
      };
      const services: ServiceProcess[] = [];
      try {
        services.push(await startService(env), await startService(env));
        await Promise.all(
          services.map((service) => waitUntilReady(service, { timeoutMs: 30_000 })),
        );
      } finally {
        await Promise.all(services.map((service) => service.stop()));
      }
      const applied = await appliedMigrations();
      expect([round, applied.length, new Set(applied).size]).toEqual([
        round,
        migrationCount,
        migrationCount,
      ]);
      for (const service of services) {
        expect(service.output()).not.toMatch(/duplicate key|Unable to connect to the database/);
      }
    }
  }, 180_000);

  it('the loser of the lock finds nothing to do (runMigrations from two connections)', async () => {
    await emptySchema();
    const sources = [0, 1].map(
      () =>
        new DataSource(
          dataSourceOptions({
            url,
            poolSize: 2,
            connectTimeoutMs: 2000,
            statementTimeoutMs: 0,
            retryAttempts: 0,
            migrateOnBoot: false,
            readUrls: [],
            replicaMaxLagMs: 5000,
          }),
        ),
    );
    await Promise.all(sources.map((source) => source.initialize()));
    try {
      const runs = await Promise.all(sources.map((source) => runMigrations(source)));
      expect(runs.map((applied) => applied.length).sort()).toEqual([0, migrationCount]);
      expect(await appliedMigrations()).toHaveLength(migrationCount);
    } finally {
      await Promise.all(sources.map((source) => source.destroy()));
    }
  });
});
