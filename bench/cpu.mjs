// CPU accounting from /proc: what each request cost the app, PostgreSQL and the load generator,
// and how much of the machine other jobs took while a run was measured (a noisy run).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Clock ticks per second of /proc CPU times (USER_HZ). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * pid -> parent, CPU ticks, and `reaped`: the CPU of the children it has waited for. Counting
 * that too keeps a process's CPU in its parent's subtree after it exits: a PostgreSQL backend
 * whose pool connection idles out (reaped by the postmaster), a wrk run (reaped by this process).
 */
function readProcesses() {
  const processes = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      processes.set(Number(name), {
        ppid: Number(fields[1]),
        cpu: Number(fields[11]) + Number(fields[12]),
        reaped: Number(fields[13]) + Number(fields[14]),
      });
    } catch {
      // the process exited while we looked
    }
  }
  return processes;
}

function subtree(processes, root) {
  const pids = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, { ppid }] of processes) {
      if (!pids.has(pid) && pids.has(ppid)) {
        pids.add(pid);
        grew = true;
      }
    }
  }
  let ticks = 0;
  for (const pid of pids)
    ticks += (processes.get(pid)?.cpu ?? 0) + (processes.get(pid)?.reaped ?? 0);
  return ticks;
}

/**
 * CPU times (clock ticks) of the whole machine and of what the benchmark runs: the process under
 * test, the load generator (this process, and wrk, which has exited and been reaped by the time a
 * run's second snapshot is taken) and the rest of this process's descendants (PostgreSQL,
 * embedded).
 */
export function cpuSnapshot(targetPid) {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7];
    const processes = readProcesses();
    const me = processes.get(process.pid);
    const ours = subtree(processes, process.pid);
    const target = targetPid ? subtree(processes, targetPid) : 0;
    const self = (me?.cpu ?? 0) + (me?.reaped ?? 0);
    return {
      busy,
      total: busy + fields[3] + fields[4],
      ours,
      target,
      self,
      postgres: ours - target - self,
    };
  } catch {
    return undefined;
  }
}

/**
 * Percent of all cores used by processes the benchmark did not start (other jobs sharing the
 * machine) between two snapshots: a high figure means a noisy run.
 */
export function foreignCpu(before, after) {
  if (!before || !after || after.total <= before.total) return NaN;
  const foreign = after.busy - before.busy - (after.ours - before.ours);
  return Math.max(0, (100 * foreign) / (after.total - before.total));
}

/** CPU microseconds per answered request of the app, PostgreSQL and the load generator. */
export function cpuPerRequest(before, after, requests) {
  if (!before || !after || requests === 0) return undefined;
  const us = (key) => Math.max(0, ((after[key] - before[key]) * 1e6) / CLOCK_TICKS / requests);
  return { app: us('target'), postgres: us('postgres'), load: us('self') };
}

/** Waits (at most `maxS` seconds) until other jobs use under 10% of the CPU for a second. */
export async function waitIdle(maxS, log) {
  const end = performance.now() + maxS * 1000;
  let busy = NaN;
  while (performance.now() < end) {
    const before = cpuSnapshot();
    await sleep(1000);
    busy = foreignCpu(before, cpuSnapshot());
    if (!(busy >= 10)) return;
  }
  log(`  (other jobs still use ${busy.toFixed(0)}% CPU after waiting ${maxS} s; measuring anyway)`);
}

/** The cores `--pin` uses: the app under test alone on one, everything else on the other. */
export const PINNED_CORES = { app: 0, rest: 1 };

/**
 * `--pin`: sets the CPU affinity of every thread of a process (taskset, util-linux). Processes it
 * starts afterwards inherit it, so pinning the benchmark itself first puts PostgreSQL and the load
 * generator on the same core. On a shared two-core machine this keeps the app's CPU per request
 * from depending on where the scheduler happened to run its neighbours: in an A/A run (the same
 * build as two targets) the two medians differed by 12 % unpinned and 3.5 % pinned.
 */
export function pinProcess(pid, core) {
  execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', String(core), String(pid)], {
    stdio: 'ignore',
  });
}

/**
 * CPU seconds of this process's children that have exited and been waited for (cutime + cstime
 * of /proc/self/stat): taken around a run, what a load generator run as a child process cost.
 */
export function reapedChildrenCpuS() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
}
