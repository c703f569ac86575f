// The benchmark's command line (see the header of bench/run.mjs and bench/README.md).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

/**
 * `traced`: the service with tracing on (`--tracing` adds it); `compared`: another build of the
 * service (`--compare DIR` adds it).
 */
export const TARGET_KINDS = ['service', 'baseline', 'express', 'nest-sample', 'traced', 'compared'];
export const ENDPOINT_KEYS = [
  'health',
  'user',
  'user304',
  'list',
  'posts',
  'grpc',
  'patch',
  'create',
  'createKeyed',
];

const positive = (value, name) => {
  const n = Number(value);
  if (!(Number.isFinite(n) && n > 0)) throw new Error(`--${name} must be a positive number`);
  return n;
};

/** Parses argv; prints the usage (the header comment of run.mjs) and exits on --help. */
export function parseOptions(argv = process.argv.slice(2)) {
  const { values: args } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      scale: { type: 'boolean', default: false },
      auth: { type: 'boolean', default: false },
      feed: { type: 'boolean', default: false },
      overload: { type: 'boolean', default: false },
      scim: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      repetitions: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      targets: { type: 'string', default: 'service,baseline,express,nest-sample' },
      users: { type: 'string' },
      posts: { type: 'string' },
      sizes: { type: 'string' },
      'load-generator': { type: 'string', default: 'auto' },
      'cpu-prof': { type: 'boolean', default: false },
      'sql-stats': { type: 'boolean', default: false },
      explain: { type: 'boolean', default: false },
      'skip-build': { type: 'boolean', default: false },
      tracing: { type: 'boolean', default: false },
      pin: { type: 'boolean', default: false },
      'wait-idle': { type: 'string' },
      node: { type: 'string' },
      compare: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (args.help) {
    const lines = readFileSync(path.join(import.meta.dirname, 'run.mjs'), 'utf8').split('\n');
    const header = lines.slice(
      0,
      lines.findIndex((line) => !line.startsWith('//')),
    );
    console.log(header.map((line) => line.slice(3)).join('\n'));
    process.exit(0);
  }
  const options = {
    quick: args.quick,
    scale: args.scale,
    auth: args.auth,
    feed: args.feed,
    overload: args.overload,
    scim: args.scim,
    durationS: positive(
      args.duration ?? (args.quick ? 3 : args.overload || args.scim ? 15 : 20),
      'duration',
    ),
    warmupS: args.warmup === undefined ? (args.quick ? 1 : args.scim ? 3 : 5) : Number(args.warmup),
    repetitions: Math.round(positive(args.repetitions ?? 2, 'repetitions')),
    // --overload: the most connections of its open loop (its capacity run has 50 callers).
    connections: Math.round(
      positive(args.connections ?? (args.overload ? 8000 : 50), 'connections'),
    ),
    users: Math.round(positive(args.users ?? (args.quick ? 20_000 : 100_000), 'users')),
    posts: Math.round(Number(args.posts ?? (args.quick ? 100_000 : 500_000))),
    sizes: args.sizes,
    targets: [
      ...new Set([
        ...args.targets.split(',').filter(Boolean),
        ...(args.tracing ? ['traced'] : []),
        ...(args.compare === undefined ? [] : ['compared']),
      ]),
    ],
    only: args.only?.split(',').filter(Boolean),
    loadGenerator: args['load-generator'],
    cpuProf: args['cpu-prof'],
    sqlStats: args['sql-stats'],
    explain: args.explain,
    skipBuild: args['skip-build'],
    waitIdleS: args['wait-idle'] === undefined ? undefined : Number(args['wait-idle']),
    pin: args.pin,
    // The runtime of the targets: this one's unless `--node 24` (the pinned Node 24), an exact
    // version or a binary's path.
    node: args.node,
    // Another checkout of this repository with dist/ built, run beside the service (`compared`).
    compare: args.compare,
  };
  for (const target of options.targets) {
    if (!TARGET_KINDS.includes(target)) throw new Error(`unknown --targets entry ${target}`);
  }
  if (options.targets.includes('compared') && options.compare === undefined) {
    throw new Error('--targets compared needs --compare DIR (the other build)');
  }
  for (const key of options.only ?? []) {
    if (!ENDPOINT_KEYS.includes(key)) {
      throw new Error(`unknown --only entry ${key} (one of ${ENDPOINT_KEYS.join(', ')})`);
    }
  }
  if (!['auto', 'wrk', 'autocannon'].includes(options.loadGenerator)) {
    throw new Error('--load-generator must be auto, wrk or autocannon');
  }
  return options;
}
