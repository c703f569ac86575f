// `node bench/topology.mjs`: the figures behind README "Scaling out", on this machine's tools
// (Debian PostgreSQL 15 for a primary and two pg_basebackup standbys, PgBouncer 1.18):
//   1. the cost of bounding statements (DB_STATEMENT_TIMEOUT_MS): plain client, this service's
//      bounding client (src/database/database-client.ts), and SET LOCAL in a transaction around each query, direct and through
//      PgBouncer (sequential SELECT 1, so round trips show);
//   2. the share of list traffic the replicas serve, and their lag, with the built service
//      reading from two replicas under a write load.
// Every server listens on 127.0.0.1 on a free port and is stopped by PID at the end; every loop
// is bounded in count.
import pg from 'pg';
import { databaseClient } from '../dist/src/database/database-client.js';
import { cleanupOnExit } from '../scripts/lib/cleanup.mjs';
import { startPrimary } from '../scripts/lib/pg-cluster.mjs';
import { startPgBouncer } from '../scripts/lib/pgbouncer.mjs';
import { buildService, startService, waitUntilReady } from '../scripts/lib/service-process.mjs';

const QUERIES = 3000;
const LIST_REQUESTS = 600;
const log = (...args) => console.log(...args);
const { cleanups, cleanup } = cleanupOnExit({ what: 'bench/topology.mjs', log });

async function perQuery(url, mode) {
  const Client = mode === 'bounded' ? databaseClient(5000) : pg.Client;
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const run = async () => {
      if (mode === 'set-local') {
        await client.query('BEGIN');
        await client.query("SET LOCAL statement_timeout = '5s'");
        await client.query('SELECT 1');
        await client.query('COMMIT');
      } else {
        await client.query('SELECT 1');
      }
    };
    for (let i = 0; i < 300; i++) await run();
    const started = process.hrtime.bigint();
    for (let i = 0; i < QUERIES; i++) await run();
    return Number(process.hrtime.bigint() - started) / 1e3 / QUERIES;
  } finally {
    await client.end();
  }
}

const metric = (text, pattern) =>
  [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);

try {
  buildService();
  const primary = await startPrimary({ database: 'users_bench' });
  cleanups.push(primary.stop);
  const bouncer = await startPgBouncer({ targetUrl: primary.url });
  cleanups.push(bouncer.stop);

  log(`1. statement bound, µs per SELECT 1 (best of 3 runs of ${QUERIES}, sequential)`);
  for (const [name, url] of [
    ['direct', primary.url],
    ['PgBouncer', bouncer.url],
  ]) {
    // Interleaved and repeated on a shared machine: the best of three runs per mode.
    const row = { plain: Infinity, bounded: Infinity, 'set-local': Infinity };
    for (let repetition = 0; repetition < 3; repetition++) {
      for (const mode of Object.keys(row))
        row[mode] = Math.min(row[mode], await perQuery(url, mode));
    }
    for (const mode of Object.keys(row)) row[mode] = row[mode].toFixed(0);
    log(
      `   ${name.padEnd(10)} plain ${row.plain}  service's client ${row.bounded}  SET LOCAL ${row['set-local']}`,
    );
  }

  const standbys = [await primary.startStandby(), await primary.startStandby()];
  for (const standby of standbys) cleanups.push(standby.stop);
  const service = await startService({
    env: {
      NODE_ENV: 'production',
      // Production refuses to start without choosing: this run measures the service without tokens.
      AUTH_MODE: 'none',
      LOG_LEVEL: 'warn',
      DATABASE_URL: bouncer.url,
      DATABASE_READ_URLS: standbys.map((s) => s.url).join(','),
      MIGRATE_ON_BOOT: 'true',
    },
  });
  cleanups.push(() => service.stop());
  await waitUntilReady(service);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const text = await (await fetch(service.metricsUrl)).text();
    if ((text.match(/^db_replica_up\{[^}]*\} 1$/gm) ?? []).length === 2) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const lags = [];
  let writes = 0;
  for (let i = 0; i < LIST_REQUESTS; i++) {
    if (i % 3 === 0) {
      await fetch(`${service.url}/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: `bench ${i}` }),
      });
      writes++;
    }
    await (await fetch(`${service.url}/users?limit=10&page=${1 + (i % 5)}`)).arrayBuffer();
    if (i % 50 === 0) {
      const text = await (await fetch(service.metricsUrl)).text();
      lags.push(
        ...[...text.matchAll(/^db_replica_lag_seconds\{[^}]*\} (\S+)$/gm)].map(
          (m) => Number(m[1]) * 1000,
        ),
      );
    }
  }
  const text = await (await fetch(service.metricsUrl)).text();
  const replica = metric(text, /^db_list_reads_total\{pool="replica"\} (\d+)/gm);
  const fromPrimary = metric(text, /^db_list_reads_total\{pool="primary"\} (\d+)/gm);
  log(
    `2. ${LIST_REQUESTS} list requests beside ${writes} creates, two replicas, writes through PgBouncer`,
  );
  log(
    `   list queries: replica ${replica}, primary ${fromPrimary} (replica share ${((100 * replica) / (replica + fromPrimary)).toFixed(1)}%)`,
  );
  log(
    `   replica lag samples (ms): max ${Math.max(...lags).toFixed(1)}, mean ${(lags.reduce((a, b) => a + b, 0) / lags.length).toFixed(1)} over ${lags.length}`,
  );
} finally {
  await cleanup();
}
