// The OpenAPI document as the built service serves it (GET /docs-json), for `npm run openapi` and
// the Redocly lint: `node dist/src/main.js` on free loopback ports with its embedded PostgreSQL in
// a temp directory, stopped by PID (SIGTERM, so it stops its database) and the directory removed.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePorts } from './ports.mjs';
import { SERVICE_ENTRY, startService, waitUntilReady } from './service-process.mjs';

/**
 * Starts the built service, fetches its document and returns it as text. Every clean-up task is
 * pushed onto `cleanups` (see cleanup.mjs), so an interrupted run leaves nothing behind.
 * @param {{ cleanups: (() => Promise<unknown>)[]; name?: string }} options
 * @returns {Promise<string>}
 */
export async function fetchServedDocument({ cleanups, name = 'openapi' }) {
  if (!existsSync(SERVICE_ENTRY)) {
    throw new Error(`${SERVICE_ENTRY} is missing: run npm run build first`);
  }
  const [pgPort] = await freePorts(1);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'users-openapi-pg-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  // No DATABASE_URL, so the embedded database starts; nothing else from the caller's shell.
  const service = await startService({
    name: `${name} service`,
    env: {
      NODE_ENV: 'development',
      PG_PORT: String(pgPort),
      PG_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SHUTDOWN_DRAIN_MS: '0',
    },
  });
  // SIGTERM lets the service stop its embedded PostgreSQL; SIGKILL only if it hangs.
  cleanups.push(() => service.stop({ timeoutMs: 30_000 }));
  await waitUntilReady(service, { timeoutMs: 120_000 });
  const response = await fetch(`${service.url}/docs-json`);
  if (response.status !== 200) throw new Error(`GET /docs-json: ${response.status}`);
  return response.text();
}
