// Readiness while the database's schema is behind the build (MIGRATE_ON_BOOT=false, the
// migration Job not finished): 503 and NOT_SERVING until every migration the build knows is
// applied, then ready within a health check's period, and never again checked.
import { jest } from '@jest/globals';
import type { MigrationInterface } from 'typeorm';
import { DataSource } from 'typeorm';
import { grpcClients, healthCheck, type GrpcClients } from '../../scripts/lib/grpc-client.mjs';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { AppConfig } from '../../src/config/app-config.js';
import { validateEnv } from '../../src/config/env.validation.js';
import { dataSourceOptions } from '../../src/database/database-options.js';
import { runMigrations } from '../../src/database/migrations.js';
import { HEALTH_CHECK_INTERVAL_MS } from '../../src/health/health.service.js';
import { createScratchTestApp, createTestApp, type TestApp } from '../support/test-app.js';

const DATABASE = 'users_schema_behind_test';

describe('readiness while migrations are pending (e2e)', () => {
  let options: ReturnType<typeof dataSourceOptions>;
  let t: TestApp & { databaseUrl: string };
  let grpc: GrpcClients;

  /** Applies the given migrations (all of this build's by default) as the migration Job does. */
  async function migrate(
    migrations = options.migrations as (new () => MigrationInterface)[],
  ): Promise<string[]> {
    const dataSource = new DataSource({ ...options, migrations });
    await dataSource.initialize();
    try {
      return (await runMigrations(dataSource)).map((migration) => migration.name);
    } finally {
      await dataSource.destroy();
    }
  }

  const ready = async (app: TestApp) => (await app.http().get('/health/ready')).status === 200;

  beforeAll(async () => {
    t = await createScratchTestApp(DATABASE, {
      // One migration behind: every migration of this build but the newest.
      prepare: async (url) => {
        const env = validateEnv({ DATABASE_URL: url, NODE_ENV: 'test' });
        options = dataSourceOptions(AppConfig.fromEnv(env).database);
        await migrate((options.migrations as (new () => MigrationInterface)[]).slice(0, -1));
      },
      env: { MIGRATE_ON_BOOT: 'false' },
    });
    grpc = grpcClients(t.grpcAddress);
  });

  afterAll(async () => {
    grpc?.close();
    await t?.close();
  });

  it('answers 503 and NOT_SERVING, saying why, until the newest migration is applied', async () => {
    // Not for want of the database: it answers, and several checks have run.
    await waitFor(
      'a check of the database',
      async () => (await t.http().get('/health/ready')).body.database === 'up',
      5000,
    );
    const { status, body } = await t.http().get('/health/ready');
    expect({ status, body }).toEqual({
      status: 503,
      body: { ok: false, database: 'up', shuttingDown: false, migrations: 'pending' },
    });
    for (const service of ['', 'users.Users']) {
      expect(await healthCheck(grpc.health, service)).toBe('NOT_SERVING');
    }

    const newest = (options.migrations as (new () => MigrationInterface)[]).at(-1)!;
    expect(await migrate()).toEqual([new newest().name ?? newest.name]);
    // Within the readiness check's period (plus the time a check takes).
    await waitFor('readiness 200', () => ready(t), HEALTH_CHECK_INTERVAL_MS * 2);
    expect((await t.http().get('/health/ready')).body).toEqual({
      ok: true,
      database: 'up',
      shuttingDown: false,
    });
    await waitFor(
      'gRPC SERVING',
      async () => (await healthCheck(grpc.health, 'users.Users')) === 'SERVING',
      HEALTH_CHECK_INTERVAL_MS * 2,
    );
  });

  it('stops reading the migrations once they are all applied', async () => {
    await waitFor('readiness 200', () => ready(t), HEALTH_CHECK_INTERVAL_MS * 2);
    const statements: string[] = [];
    const query = t.dataSource.query.bind(t.dataSource);
    const spy = jest
      .spyOn(t.dataSource, 'query')
      .mockImplementation((...args: Parameters<DataSource['query']>) => {
        statements.push(args[0]);
        return query(...args);
      });
    try {
      const checks = () => statements.filter((sql) => sql.includes('transaction_read_only'));
      await waitFor(
        'three more health checks',
        () => Promise.resolve(checks().length >= 3),
        10_000,
      );
      expect(statements.filter((sql) => sql.includes('"migrations"'))).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it('is ready beside migrations of a newer release it does not know', async () => {
    await t.dataSource.query(`INSERT INTO "migrations" ("timestamp", "name") VALUES ($1, $2)`, [
      1999999999999,
      'FromANewerRelease1999999999999',
    ]);
    const older = await createTestApp({
      env: { DATABASE_URL: t.databaseUrl, MIGRATE_ON_BOOT: 'false' },
    });
    try {
      await waitFor('the older build ready', () => ready(older), HEALTH_CHECK_INTERVAL_MS * 3);
    } finally {
      await older.close();
    }
  });
});
