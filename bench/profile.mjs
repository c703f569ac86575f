// CPU profiles (--cpu-prof): for each endpoint's measured window, the time per request by the code
// that caused it, and the top functions by self time.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fmt, table } from './format.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The package (or file of the service, or bench/) a profiled frame belongs to, if any. */
function owner(url) {
  const match =
    /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url) ??
    /(dist\/src\/[^/]+\/?[^/]*|bench\/)/.exec(url);
  return match?.[1];
}

/**
 * From the samples of a .cpuprofile taken within [fromUs, toUs] (V8 and process.hrtime share the
 * monotonic clock), idle left out: the time per request by the code that caused it, i.e. the
 * innermost package or service frame on the stack (so a socket write or a JSON.stringify counts
 * for the library that called it), and the top functions by self time.
 */
function summarizeProfile(profile, { fromUs = -Infinity, toUs = Infinity, requests, top = 12 }) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const causeOf = new Map();
  const cause = (id) => {
    if (!causeOf.has(id)) {
      const { functionName, url } = byId.get(id).callFrame;
      const special = ['(garbage collector)', '(program)'].includes(functionName);
      const up = parent.get(id);
      causeOf.set(
        id,
        special
          ? functionName
          : (owner(url) ?? (up === undefined ? '(node, no package on the stack)' : cause(up))),
      );
    }
    return causeOf.get(id);
  };
  const self = new Map();
  const causes = new Map();
  let busy = 0;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = Math.max(0, profile.timeDeltas[i] ?? 0);
    t += dt;
    if (t < fromUs || t > toUs) return;
    const { callFrame } = byId.get(id);
    if (callFrame.functionName === '(idle)') return;
    const url = callFrame.url.replace(`file://${ROOT}/`, '').replace(/^.*node_modules\//, '~/');
    const key = `${callFrame.functionName || '(anonymous)'} ${url}${url ? `:${callFrame.lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    causes.set(cause(id), (causes.get(cause(id)) ?? 0) + dt);
    busy += dt;
  });
  const pct = (us) => `${((100 * us) / busy).toFixed(1)}%`;
  const perRequest = (us) => (requests ? fmt(us / requests, 0) : '–');
  const sorted = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  return [
    `Busy (not idle) ${fmt(busy / 1e6, 2)} s of ${fmt((toUs - fromUs) / 1e6, 2)} s, ` +
      `${perRequest(busy)} µs per request (wall-clock samples: they include time preempted).\n`,
    table(
      ['share', 'µs/req', 'caused by (innermost package or service frame)'],
      sorted(causes, 14).map(([k, us]) => [pct(us), perRequest(us), `\`${k}\``]),
    ),
    '',
    table(
      ['self', 'function  location'],
      sorted(self, top).map(([k, us]) => [pct(us), `\`${k}\``]),
    ),
  ].join('\n');
}

/**
 * Per target and endpoint, the profile of the target's last measured run of it. The targets must
 * have stopped (a process writes its .cpuprofile when it exits).
 */
export async function printProfiles(targets, results, list) {
  for (const { kind, profileFile } of targets) {
    if (!profileFile) continue;
    const profile = JSON.parse(await readFile(profileFile, 'utf8'));
    for (const endpoint of list) {
      const run = results[kind]?.[endpoint.key]?.at(-1);
      if (!run) continue;
      const [fromUs, toUs] = run.window;
      console.log(
        `\n### CPU profile: ${kind}, ${endpoint.name} (${path.relative(ROOT, profileFile)})\n`,
      );
      console.log(summarizeProfile(profile, { fromUs, toUs, requests: run.count }));
    }
  }
}
