// A load generator run as a child process to its end: its stdout and stderr collected, and a
// SIGKILL once it runs 30 s past its duration (a hang, not a slow run).
import { spawn } from 'node:child_process';

const GRACE_MS = 30_000;

/**
 * Runs `command` with `args`, a load of `durationS` seconds, until it exits.
 * @returns {Promise<{ exit: { code: number | null, signal: string | null }, output: string }>}
 */
export async function runToEnd(command, args, durationS) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const killer = setTimeout(() => process.kill(child.pid, 'SIGKILL'), durationS * 1000 + GRACE_MS);
  const exit = await new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  clearTimeout(killer);
  return { exit, output };
}
