// The processes under test: the built service as deployed, the raw node:http baseline, the
// Express 5 ceiling and the NestJS sample's shape (bench/baseline/), and with --compare another
// build of the service, each started on free loopback ports through the shared service-process
// module, with the same database and pool size.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import {
  buildService,
  SERVICE_ENTRY,
  serviceEntry,
  startService,
  waitUntilReady,
} from '../scripts/lib/service-process.mjs';
import { PINNED_CORES, pinProcess } from './cpu.mjs';
import { connect, startDatabase } from './database.mjs';
import { secs } from './format.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
export const RESULTS = path.join(ROOT, 'bench', 'results');
const ENTRIES = {
  service: SERVICE_ENTRY,
  baseline: path.join(ROOT, 'bench', 'baseline', 'http-server.mjs'),
  express: path.join(ROOT, 'bench', 'baseline', 'express-server.mjs'),
  'nest-sample': path.join(ROOT, 'bench', 'baseline', 'nest-sample.mjs'),
  // The service again, with tracing on (bench/tracing.mjs sets its OTEL_* variables).
  traced: SERVICE_ENTRY,
};
/**
 * Whether a target is measured on an endpoint: rows marked `serviceOnly` measure features only
 * the service has (and so the compared build of it); the Express ceiling's gRPC server is the
 * baseline's (not measured twice); the NestJS sample has neither gRPC nor writes.
 */
export function measures(kind, endpoint) {
  if (endpoint.serviceOnly) return kind === 'service' || kind === 'compared';
  if (kind === 'nest-sample') return !endpoint.grpc && endpoint.method !== 'POST';
  return !(endpoint.grpc && kind === 'express');
}
/** What the benchmark keeps of a target's output: enough for the error message if it dies. */
const KEEP_CHARS = 64 * 1024;

/** Builds the service when dist/ is older than the sources (unless skipped). */
export function build({ skipBuild, log }) {
  if (skipBuild) return;
  const started = performance.now();
  buildService({ stdio: 'inherit' });
  if (!existsSync(SERVICE_ENTRY)) throw new Error(`no ${SERVICE_ENTRY} after the build`);
  log(`build checked in ${secs(started)} s`);
}

/**
 * The build `--compare DIR` runs beside the service: another checkout of this repository (a git
 * worktree of an older commit, say) with its `dist/` built. Its label in the report is
 * `service@<DIR's name>`; `commit` is its checked-out commit, when DIR is a git checkout.
 */
export function comparedBuild(dir) {
  const root = path.resolve(dir);
  if (!existsSync(serviceEntry(root))) {
    throw new Error(
      `--compare ${dir}: no ${serviceEntry(root)} (run npm ci and npm run build there)`,
    );
  }
  let commit = null;
  try {
    commit = execFileSync('git', ['-C', root, 'rev-parse', '--short=12', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // not a git checkout: the report names the directory only
  }
  return { root, label: `service@${path.basename(root)}`, commit };
}

/**
 * Starts one target and waits until GET /health/ready answers 200. The service runs as deployed:
 * NODE_ENV=production and LOG_LEVEL=info, so every request writes its log line, into a pipe this
 * process drains, as a container runtime would; `compared` is the build of `compare`
 * (comparedBuild), started exactly like the service, with the same environment. With `cpuProf`,
 * the process writes a .cpuprofile when it exits (`profileFile`). With `pin`, it runs alone on
 * its core (`--pin`).
 */
export async function startTarget(
  kind,
  { url, extraEnv = {}, cpuProf = false, pin = false, node, compare, cleanups, log },
) {
  const label = kind === 'compared' ? compare.label : kind;
  const nodeFlags = [];
  let profileFile;
  if (cpuProf) {
    const dir = path.join(RESULTS, 'profiles');
    await mkdir(dir, { recursive: true });
    profileFile = path.join(dir, `${kind}-${Date.now()}.cpuprofile`);
    nodeFlags.push(
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      `--cpu-prof-name=${path.basename(profileFile)}`,
    );
  }
  const started = performance.now();
  const target = await startService({
    name: label,
    ...(kind === 'compared' ? { root: compare.root } : { entry: ENTRIES[kind] }),
    nodeFlags,
    keepChars: KEEP_CHARS,
    execPath: node?.path,
    env: {
      NODE_ENV: 'production',
      // Production refuses to start without choosing: this run measures the service without tokens.
      AUTH_MODE: 'none',
      LOG_LEVEL: 'info',
      DATABASE_URL: url,
      MIGRATE_ON_BOOT: 'false',
      API_KEYS: 'bench-key',
      SHUTDOWN_DRAIN_MS: '0',
      DB_POOL_SIZE: '10',
      ...extraEnv,
    },
  });
  cleanups.push(() => target.stop());
  if (pin) pinProcess(target.pid, PINNED_CORES.app);
  await waitUntilReady(target);
  log(
    `${label} ready in ${secs(started)} s on Node ${node?.version ?? process.version} ` +
      `(HTTP ${target.port}, gRPC ${target.grpcPort}, pid ${target.pid})`,
  );
  return { ...target, kind, label, base: target.url, profileFile };
}

/** Applies migrations/ by booting the service once with MIGRATE_ON_BOOT=true. */
export async function migrate(url, { node, cleanups, log }) {
  const service = await startTarget('service', {
    url,
    node,
    extraEnv: { MIGRATE_ON_BOOT: 'true', LOG_LEVEL: 'warn' },
    cleanups,
    log,
  });
  await service.stop();
}

/**
 * The benchmark's PostgreSQL, migrated, and a client on it; `cleanups` stops both. For the modes
 * that seed their own data (--auth, --feed).
 */
export async function migratedDatabase({ node, cleanups, log }) {
  const { url } = await startDatabase({ sqlStats: false, cleanups, log });
  await migrate(url, { node, cleanups, log });
  const client = await connect(url);
  cleanups.push(() => client.end());
  return { url, client };
}
