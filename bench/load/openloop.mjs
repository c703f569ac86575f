// The open-loop generator of `npm run bench -- --overload` (bench/load/openloop/, Go, standard
// library only): built with `go build` into a temp directory on first use, then run as a child
// process, once per run, for a fixed rate and duration; its JSON summary is parsed here. Without
// `go` (Debian package golang-go), findOpenLoop says why and the open-loop runs are skipped.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findTool } from '../../scripts/lib/system-tools.mjs';
import { runToEnd } from './run-to-end.mjs';

const SOURCE = path.join(import.meta.dirname, 'openloop');

/**
 * Builds the generator (once per `cleanups`' lifetime: the directory is removed with them).
 * Resolves with its binary's path, or with { missing } saying why there is none.
 */
export function buildOpenLoop({ cleanups, log }) {
  if (!findTool('go')) return { missing: 'no `go` on PATH (Debian package golang-go)' };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-openloop-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const binary = path.join(dir, 'openloop');
  const started = performance.now();
  try {
    execFileSync('go', ['build', '-o', binary, '.'], {
      cwd: SOURCE,
      // The module has no dependencies: nothing to download.
      env: { ...process.env, GOFLAGS: '', GOPROXY: 'off', CGO_ENABLED: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
  } catch (error) {
    return { missing: `go build failed: ${error.stderr ?? error.message}` };
  }
  log(`open-loop generator built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { binary };
}

/**
 * One open-loop run against `base` (127.0.0.1 only): `rate` arrivals per second for `durationS`,
 * at most `conns` connections, ids from 1..users, classes weighted by `mix` (e.g.
 * "read=5,list=2"). Resolves with the generator's summary (see bench/load/openloop/stats.go).
 */
export async function openLoop(
  binary,
  { base, rate, durationS, conns, users, mix = 'read=1', feedToken = '', tag },
) {
  if (new URL(base).hostname !== '127.0.0.1') throw new Error(`refusing to load ${base}`);
  const args = [
    '-base',
    base,
    '-rate',
    String(Math.round(rate)),
    '-duration',
    `${durationS}s`,
    '-conns',
    String(conns),
    '-users',
    String(users),
    '-mix',
    mix,
    '-feed-token',
    feedToken,
    ...(tag ? ['-tag', tag] : []),
  ];
  // Its own bound: the long polls still open are cut 3 s after the last arrival.
  const { exit, output } = await runToEnd(binary, args, durationS + 5);
  const line = output.split('\n').find((l) => l.startsWith('{'));
  if (exit.code !== 0 || !line) {
    throw new Error(`openloop ${args.join(' ')} ended ${JSON.stringify(exit)}:\n${output}`);
  }
  return JSON.parse(line);
}
