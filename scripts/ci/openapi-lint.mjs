// Lints the OpenAPI document the built service serves (GET /docs-json) with Redocly's
// `recommended` rules (redocly.yaml). Starts `node dist/src/main.js` on free ports with its
// embedded PostgreSQL in a temp directory, fetches the document, stops the service by PID and
// removes the directory. Needs `npm run build` first. The document is kept as dist/openapi.json,
// the path .redocly.lint-ignore.yaml names. Exits with redocly's status: 1 on an error that file
// does not list, 0 when only warnings remain (they are printed).
//
//   node scripts/ci/openapi-lint.mjs
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cleanupOnExit } from '../lib/cleanup.mjs';
import { freePorts } from '../lib/ports.mjs';
import { SERVICE_ENTRY, startService, waitUntilReady } from '../lib/service-process.mjs';

const root = path.resolve(import.meta.dirname, '..', '..');
const redocly = path.join(root, 'node_modules', '.bin', 'redocly');
const log = (...args) => console.error('openapi-lint:', ...args);
const documentFile = path.join('dist', 'openapi.json');

const { cleanups, cleanup } = cleanupOnExit({ what: 'openapi-lint', log });

/** The built service on free loopback ports, with a throwaway embedded database. */
async function startWithEmbeddedDatabase() {
  const [pgPort] = await freePorts(1);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'users-openapi-pg-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  // No DATABASE_URL, so the embedded database starts; nothing else from the caller's shell.
  const service = await startService({
    name: 'openapi-lint service',
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
  return service.url;
}

async function main() {
  if (!existsSync(SERVICE_ENTRY))
    throw new Error(`${SERVICE_ENTRY} is missing: run npm run build first`);
  const base = await startWithEmbeddedDatabase();
  const response = await fetch(`${base}/docs-json`);
  if (response.status !== 200) throw new Error(`GET /docs-json: ${response.status}`);
  const document = await response.text();
  await cleanup();

  await writeFile(path.join(root, documentFile), document);
  // redocly.yaml in the project root selects the rules; a relative path, as the ignore file has it.
  const lint = spawnSync(redocly, ['lint', documentFile, '--format', 'stylish'], {
    cwd: root,
    stdio: 'inherit',
    // CI has no business phoning home or nagging about updates.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  return lint.status ?? 1;
}

main().then(
  (code) => process.exit(code),
  async (error) => {
    log(error instanceof Error ? error.message : error);
    await cleanup();
    process.exit(1);
  },
);
