// Lints the OpenAPI document the built service serves (GET /docs-json) with Redocly's
// `recommended` rules (redocly.yaml). Starts `node dist/src/main.js` on free ports with its
// embedded PostgreSQL in a temp directory, fetches the document, stops the service by PID and
// removes the directory. Needs `npm run build` first. The document is kept as dist/openapi.json,
// the path .redocly.lint-ignore.yaml names. Exits with redocly's status: 1 on an error that file
// does not list, 0 when only warnings remain (they are printed).
//
//   node scripts/ci/openapi-lint.mjs
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cleanupOnExit } from '../lib/cleanup.mjs';
import { freePorts } from '../lib/embedded-pg.mjs';

const root = path.resolve(import.meta.dirname, '..', '..');
const entry = path.join(root, 'dist', 'src', 'main.js');
const redocly = path.join(root, 'node_modules', '.bin', 'redocly');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (...args) => console.error('openapi-lint:', ...args);
const documentFile = path.join('dist', 'openapi.json');

const { cleanups, cleanup } = cleanupOnExit({ what: 'openapi-lint', log });

/** The built service on free loopback ports, with a throwaway embedded database. */
async function startService() {
  const [port, grpcPort, pgPort] = await freePorts(3);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'users-openapi-pg-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const output = [];
  const child = spawn(process.execPath, [entry], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Only what the service needs: no DATABASE_URL (so the embedded database starts), nothing
    // from the caller's shell that could point it at a real database.
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'development',
      HOST: '127.0.0.1',
      PORT: String(port),
      GRPC_PORT: String(grpcPort),
      PG_PORT: String(pgPort),
      PG_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SHUTDOWN_DRAIN_MS: '0',
    },
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk) => output.push(chunk.toString()));
  }
  let exit;
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve((exit = { code, signal }))),
  );
  // By PID: SIGTERM lets the service stop its embedded PostgreSQL; SIGKILL only if it hangs.
  cleanups.push(async () => {
    if (exit) return;
    process.kill(child.pid, 'SIGTERM');
    if (!(await Promise.race([exited, sleep(30_000)]))) process.kill(child.pid, 'SIGKILL');
    await exited;
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (exit) throw new Error(`the service exited (${JSON.stringify(exit)}):\n${output.join('')}`);
    if (Date.now() > deadline) throw new Error(`the service is not ready:\n${output.join('')}`);
    const ready = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(1000) }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return base;
    await sleep(200);
  }
}

async function main() {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first`);
  const base = await startService();
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
