// Two processes applying migrations at the same moment (replicas with MIGRATE_ON_BOOT=true, or
// the Job beside one) both end up serving and each migration runs exactly once
// (docs/scaling-out.md, Migrations under concurrency). Each round starts from an empty schema in a database of its own.
import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/database-options.js';
import { runMigrations } from '../../src/database/migrations.js';
import { migrationJob } from '../support/migration-job.js';
import { buildService, startService, waitUntilReady } from '../support/service-process.js';
import { scratchDatabase } from '../support/test-app.js';

const ROUNDS = 10;
const DATABASE = 'users_migration_race_test';

describe('migrations applied by two processes at once (e2e)', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let url: string;
  const migrationCount = (
    dataSourceOptions({ url: 'postgres://x@127.0.0.1/x' } as never).migrations as unknown[]
  ).length;

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
    scratch = await scratchDatabase(DATABASE);
    url = scratch.url;
  });

  afterAll(async () => {
    await scratch?.drop();
  });

  const runMigrationJob = () => migrationJob(url);

  /** A built service with MIGRATE_ON_BOOT=true, until it is ready; its output. */
  async function bootingService(): Promise<{ code: number | null; output: string }> {
    const service = await startService({
      DATABASE_URL: url,
      MIGRATE_ON_BOOT: 'true',
      LOG_LEVEL: 'warn',
      SHUTDOWN_DRAIN_MS: '0',
    });
    try {
      await waitUntilReady(service, { timeoutMs: 30_000 });
    } finally {
      await service.stop();
    }
    return { code: 0, output: service.output() };
  }

  // Rounds 1-2: two replicas booting with MIGRATE_ON_BOOT=true; 3-4: the Job beside a booting
  // replica; 5-10: two Jobs (a retried Job beside the first). A service boot costs about 3 s of a
  // shared CPU, the CLI about 1 s, hence the mix.
  const pairs = [
    ...Array.from({ length: 2 }, () => [bootingService, bootingService]),
    ...Array.from({ length: 2 }, () => [bootingService, runMigrationJob]),
    ...Array.from({ length: ROUNDS - 4 }, () => [runMigrationJob, runMigrationJob]),
  ];

  it(`two processes applying migrations at once, ${ROUNDS} rounds: both succeed, each migration once`, async () => {
    for (const [round, pair] of pairs.entries()) {
      await emptySchema();
      const results = await Promise.all(pair.map((start) => start()));
      const applied = await appliedMigrations();
      expect([round, applied.length, new Set(applied).size]).toEqual([
        round,
        migrationCount,
        migrationCount,
      ]);
      for (const { code, output } of results) {
        expect([round, code]).toEqual([round, 0]);
        expect(output).not.toMatch(/duplicate key|Unable to connect to the database/);
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
            keepAliveIdleS: 5,
            maxLifetimeS: 0,
            retryAttempts: 0,
            failoverRetryMs: 0,
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
