// Processes by PID, read from /proc: a signal that tolerates a process already gone, a process's
// children, whether it still runs, and a bounded wait for some to be gone. The failover test kills
// a node's processes by PID through these (scripts/lib/patroni-member.mjs).
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Sends `name` to `pid`.
 * @param {number} pid
 * @param {NodeJS.Signals} name
 * @returns {boolean} false when the process was already gone.
 */
export function signal(pid, name) {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false; // already gone
  }
}

/**
 * PIDs whose parent is `parent` (read from /proc), e.g. a postmaster's backends.
 * @param {number} parent
 * @returns {number[]}
 */
export function childPids(parent) {
  /** @type {number[]} */
  const children = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may hold spaces and parentheses: split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      // exited while we read
    }
  }
  return children;
}

/**
 * @param {number} pid
 * @returns {boolean}
 */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    // A zombie still answers signal 0 but has stopped running.
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Waits until none of `pids` is alive, checking every 20 ms for at most `timeoutMs`.
 * @param {number[]} pids
 * @param {number} timeoutMs
 * @returns {Promise<boolean>} false when one still ran at the deadline.
 */
export async function gone(pids, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!pids.some(alive)) return true;
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
}
