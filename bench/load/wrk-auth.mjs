// wrk runs of `npm run bench -- --auth` (bench/auth.mjs): GET /users/:id, with a token per
// connection from a file (wrk-auth.lua), or none.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { findWrk, parseWrkOutput } from './wrk.mjs';

const SCRIPT = path.join(import.meta.dirname, 'wrk-auth.lua');
const THREADS = 1;
const GRACE_MS = 30_000;

export async function authLoad(target, { durationS, connections, users, tokensFile }) {
  const url = new URL(target.base);
  if (url.hostname !== '127.0.0.1') throw new Error(`refusing to load ${target.base}`);
  const wrk = findWrk();
  if (!wrk) throw new Error('--auth needs wrk (Debian package wrk)');
  const args = [
    `-t${THREADS}`,
    `-c${connections}`,
    `-d${Math.max(1, Math.round(durationS))}s`,
    '--timeout',
    '10s',
    '--latency',
    '-s',
    SCRIPT,
    target.base,
    '--',
    String(users),
    '1',
    String(THREADS),
    ...(tokensFile ? [tokensFile] : []),
  ];
  const child = spawn(wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), durationS * 1000 + GRACE_MS);
  const code = await new Promise((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`wrk exited with ${code}:\n${output}`);
  return parseWrkOutput(output);
}
