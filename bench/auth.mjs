// `npm run bench -- --auth`: the cost of authentication. Two measures:
//   1. In this process, the service's own TokenVerifierService (from dist/) against a JWKS
//      server on 127.0.0.1: a first-seen token per algorithm (one signature check) and a
//      repeated one (the verified-token cache).
//   2. Under load (wrk, GET /users/:id), the same build with authentication on (a token per
//      connection, each verified once then found in the cache) beside authentication off.
// Options used: --duration, --warmup, --repetitions, --connections, --users, --skip-build.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import {
  ALGORITHMS,
  authEnv,
  JwksServer,
  mint,
  signingKey,
} from '../scripts/lib/identity-provider.mjs';
import { authLoad } from './load/wrk.mjs';
import { seedUsers } from './seed.mjs';
import { PINNED_CORES, pinProcess } from './cpu.mjs';
import { build, migratedDatabase, startTarget } from './targets.mjs';

const DIST = path.resolve(import.meta.dirname, '..', 'dist', 'src');
const FIRST_SEEN_PER_ALG = 300;
const REPEATS = 20_000;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const micros = (ms) => `${(ms * 1000).toFixed(1)} µs`;

/** The verifier of dist/ as the service builds it, trusting `jwks`. */
async function verifierFor(jwks) {
  const { AppConfig } = await import(
    pathToFileURL(path.join(DIST, 'config', 'app-config.js')).href
  );
  const { validateEnv } = await import(
    pathToFileURL(path.join(DIST, 'config', 'env.validation.js')).href
  );
  const { TokenVerifierService } = await import(
    pathToFileURL(path.join(DIST, 'auth', 'token-verifier.service.js')).href
  );
  const config = AppConfig.fromEnv(validateEnv(authEnv(jwks)));
  const verifier = new TokenVerifierService(config, pino({ level: 'silent' }));
  if (!(await verifier.refresh())) throw new Error('the verifier could not fetch the key set');
  return verifier;
}

/** Per algorithm: median time of a first-seen token's verification, then of a cached one. */
async function microMeasure(log) {
  const keys = await Promise.all(ALGORITHMS.map((alg) => signingKey(alg)));
  const jwks = await new JwksServer(keys).start();
  try {
    const verifier = await verifierFor(jwks);
    const rows = [];
    for (const key of keys) {
      // Distinct tokens (jti), minted before timing: each verify() below is a first sight.
      const tokens = await Promise.all(
        Array.from({ length: FIRST_SEEN_PER_ALG }, (_, i) =>
          mint(key, { scope: 'users:read', jti: `${key.alg}-${i}` }),
        ),
      );
      const firstSeen = [];
      for (const token of tokens) {
        const started = performance.now();
        await verifier.verify(token);
        firstSeen.push(performance.now() - started);
      }
      const started = performance.now();
      for (let i = 0; i < REPEATS; i++) await verifier.verify(tokens[i % tokens.length]);
      const cached = (performance.now() - started) / REPEATS;
      rows.push({ alg: key.alg, firstSeenMs: median(firstSeen), cachedMs: cached });
      log(`${key.alg}: first-seen ${micros(median(firstSeen))}, cached ${micros(cached)}`);
    }
    return rows;
  } finally {
    await jwks.stop();
  }
}

export async function authBenchmark(options, { cleanups, log, node }) {
  build({ skipBuild: options.skipBuild, log });
  const micro = await microMeasure(log);
  // As in the main benchmark: before PostgreSQL starts, so that it and every wrk run inherit the
  // core; each service then runs alone on the other (--pin).
  if (options.pin) pinProcess(process.pid, PINNED_CORES.rest);

  const { url, client } = await migratedDatabase({ node, cleanups, log });
  const users = Math.min(options.users, 10_000);
  await seedUsers(client, { to: users });
  log(`seeded ${users} users`);

  const key = await signingKey('ES256');
  const jwks = await new JwksServer([key]).start();
  cleanups.push(() => jwks.stop());
  const dir = await mkdtemp(path.join(os.tmpdir(), 'users-bench-auth-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const tokensFile = path.join(dir, 'tokens.txt');
  const tokens = await Promise.all(
    Array.from({ length: options.connections }, (_, i) =>
      mint(key, { sub: `bench-${i}`, scope: 'users:read' }, { expiresIn: 3600 }),
    ),
  );
  await writeFile(tokensFile, tokens.join('\n') + '\n');

  const { pin } = options;
  const on = await startTarget('service', {
    url,
    extraEnv: authEnv(jwks),
    pin,
    node,
    cleanups,
    log,
  });
  const off = await startTarget('service', { url, pin, node, cleanups, log });
  const runs = { on: [], off: [] };
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    for (const [name, target, file] of [
      ['off', off, undefined],
      ['on', on, tokensFile],
    ]) {
      if (options.warmupS > 0) {
        await authLoad(target, { ...options, durationS: options.warmupS, users, tokensFile: file });
      }
      const result = await authLoad(target, { ...options, users, tokensFile: file });
      const ok = result.statuses['200'] ?? 0;
      if (ok !== result.requests) {
        throw new Error(
          `auth ${name}: ${result.requests - ok} answers were not 200 (${JSON.stringify(result.statuses)})`,
        );
      }
      runs[name].push(result);
      log(
        `auth ${name}: ${(ok / result.durationS).toFixed(0)} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms`,
      );
    }
  }
  report(micro, runs, { ...options, nodeVersion: node?.version ?? process.version });
}

function report(micro, runs, options) {
  console.log(
    `\n## Authentication: cost of a first-seen token (in process, median of ${FIRST_SEEN_PER_ALG} ` +
      `distinct tokens per algorithm) and of a cached one (mean of ${REPEATS})\n`,
  );
  console.log('| algorithm | first-seen token | cached token |\n|---|---|---|');
  for (const row of micro) {
    console.log(`| ${row.alg} | ${micros(row.firstSeenMs)} | ${micros(row.cachedMs)} |`);
  }
  console.log(
    `\n## GET /users/:id under load: authentication on (ES256, a token per connection) vs off ` +
      `(${options.connections} connections, ${options.repetitions} × ${options.durationS} s, median; ` +
      `the service on Node ${options.nodeVersion}${options.pin ? ', pinned' : ''})\n`,
  );
  console.log('| auth | req/s | p50 ms | p99 ms |\n|---|---|---|---|');
  for (const name of ['off', 'on']) {
    const rps = median(runs[name].map((r) => (r.statuses['200'] ?? 0) / r.durationS));
    const p50 = median(runs[name].map((r) => r.p50Ms));
    const p99 = median(runs[name].map((r) => r.p99Ms));
    console.log(`| ${name} | ${rps.toFixed(0)} | ${p50.toFixed(2)} | ${p99.toFixed(2)} |`);
  }
}
