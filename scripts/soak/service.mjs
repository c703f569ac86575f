// What the soak run measures and how it is prepared: its PostgreSQL, the built service, the users
// it seeds, and the service's memory as sampled during the run.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { startThrowawayPostgres } from '../lib/embedded-pg.mjs';
import { requestJson } from '../lib/http-client.mjs';
import { startService, waitUntilReady } from '../lib/service-process.mjs';

/**
 * The database URL: SOAK_DATABASE_URL (whose name must contain "soak": its tables are emptied),
 * or a throwaway embedded cluster whose stop is pushed onto `cleanups`.
 */
export async function startDatabase({ cleanups, log }) {
  const external = process.env.SOAK_DATABASE_URL;
  if (external) {
    const name = decodeURIComponent(new URL(external).pathname.slice(1));
    if (!name.includes('soak')) throw new Error('SOAK_DATABASE_URL: the name must contain "soak"');
    await emptyTables(external);
    return external;
  }
  // This script's own signal handlers stop the service before PostgreSQL.
  const cluster = await startThrowawayPostgres({
    prefix: 'users-soak-pg-',
    database: 'soak',
    takeOverSignals: true,
  });
  cleanups.push(cluster.stop);
  log(`embedded PostgreSQL on 127.0.0.1:${cluster.port}`);
  return cluster.url;
}

async function emptyTables(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // The change feed too: its events name users by id, and the ids start again at 1.
    await client.query(
      'TRUNCATE users, posts, user_changes, user_changes_watermark RESTART IDENTITY CASCADE',
    );
  } catch (error) {
    // A fresh database: the service creates the tables when it starts (MIGRATE_ON_BOOT).
    if (error.code !== '42P01') throw error;
  } finally {
    await client.end();
  }
}

/** The built service as deployed, migrating at boot; its stop is pushed onto `cleanups`. */
export async function startSoakService(databaseUrl, { cleanups, log }) {
  const service = await startService({
    env: {
      NODE_ENV: 'production',
      // Production refuses to start without choosing: this run measures the service without tokens.
      AUTH_MODE: 'none',
      DATABASE_URL: databaseUrl,
      MIGRATE_ON_BOOT: 'true',
      LOG_LEVEL: 'warn',
      SHUTDOWN_DRAIN_MS: '0',
    },
    keepChars: 64 * 1024,
  });
  // A generous stop: the soak checks that the service exits 0 after the load.
  const stop = () => service.stop({ timeoutMs: 20_000 });
  cleanups.push(stop);
  await waitUntilReady(service);
  log(`service ready: pid ${service.pid}, HTTP ${service.port}, gRPC ${service.grpcPort}`);
  return { ...service, stop };
}

/** Creates `count` users over the API, 20 at a time; resolves with their ids. */
export async function seedUsers(service, count, agent) {
  const ids = [];
  for (let start = 0; start < count; start += 20) {
    const batch = Array.from({ length: Math.min(20, count - start) }, (_, n) =>
      requestJson(service.url, 'POST', '/users', { name: `Seed ${start + n}` }, { agent }),
    );
    for (const result of await Promise.all(batch)) {
      if (result.status !== 201) throw new Error(`seeding failed: ${JSON.stringify(result)}`);
      ids.push(result.body.id);
    }
  }
  return ids;
}

/** The service's memory: RSS from /proc, V8 heap from /metrics (prom-client default metrics). */
export async function memory(service) {
  let rssMb = NaN;
  try {
    const status = readFileSync(`/proc/${service.pid}/status`, 'utf8');
    rssMb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
  } catch {
    // not Linux, or the process is gone
  }
  let heapMb = NaN;
  // Metrics have their own port (METRICS_PORT), outside the API's keep-alive agent.
  const metricsBase = new URL(service.metricsUrl).origin;
  const metrics = await requestJson(metricsBase, 'GET', '/metrics', undefined);
  if (metrics.status === 200 && typeof metrics.body === 'string') {
    const used = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics.body);
    if (used) heapMb = Number(used[1]) / 1024 / 1024;
  }
  return { rssMb, heapMb };
}
