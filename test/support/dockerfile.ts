import path from 'node:path';
// The Dockerfile, parsed: its stages, instructions and what they copy, set and label.
import { read } from './project-files.js';

interface Instruction {
  keyword: string;
  args: string;
}
export interface Stage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

/**
 * Enough of the Dockerfile grammar for this file: comments, continuations, stages, and the
 * `ARG NAME=default` lines before the first FROM, whose defaults FROM lines may use.
 */
function parseDockerfile(text: string): { globalArgs: Map<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' ';
      continue;
    }
    logical.push(pending + line);
    pending = '';
  }
  if (pending) logical.push(pending);
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (!keyword) continue;
    if (keyword.toUpperCase() === 'FROM') {
      const [image, as, name] = args
        .replace(/\$\{(\w+)\}/g, (whole, arg: string) => globalArgs.get(arg) ?? whole)
        .split(/\s+/);
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0) {
      const arg = keyword.toUpperCase() === 'ARG' ? /^(\w+)=(\S+)$/.exec(args.trim()) : null;
      if (!arg) throw new Error(`Dockerfile: ${keyword} before FROM`);
      globalArgs.set(arg[1], arg[2]);
    } else {
      stages.at(-1)!.instructions.push({ keyword: keyword.toUpperCase(), args: args.trim() });
    }
  }
  return { globalArgs, stages };
}

export function all(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}
export function last(stage: Stage, keyword: string): string | undefined {
  return all(stage, keyword).at(-1);
}

interface Copy {
  from?: string;
  sources: string[];
  dest: string;
}
export function copies(stage: Stage): Copy[] {
  return all(stage, 'COPY').map((args) => {
    const words = args.split(/\s+/);
    const flags = words.filter((w) => w.startsWith('--'));
    const paths = words.filter((w) => !w.startsWith('--'));
    const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
    return { from, sources: paths.slice(0, -1), dest: paths.at(-1)! };
  });
}

/**
 * Where a stage's COPY instructions put each source, relative to its working directory: a source
 * copied from another stage is named relative to `fromWorkdir`, that stage's.
 */
export function placedFiles(stage: Stage, fromWorkdir = '/'): Map<string, string> {
  const dir = workdir(stage);
  const placed = new Map<string, string>();
  for (const copy of copies(stage)) {
    for (const source of copy.sources) {
      const name = copy.from ? path.posix.relative(fromWorkdir, source) : source;
      // `COPY a b/` puts a at b/a; `COPY a b` puts it at b.
      const dest = copy.dest.endsWith('/')
        ? path.posix.join(path.posix.resolve(dir, copy.dest), path.posix.basename(name))
        : path.posix.resolve(dir, copy.dest);
      placed.set(name, path.posix.relative(dir, dest));
    }
  }
  return placed;
}

/** `ENV A=1 B=2` lines of a stage, merged. */
export function stageEnv(stage: Stage): Map<string, string> {
  const env = new Map<string, string>();
  for (const args of all(stage, 'ENV')) {
    for (const pair of args.split(/\s+/)) {
      const eq = pair.indexOf('=');
      expect(eq).toBeGreaterThan(0); // the legacy `ENV NAME value` form is not used here
      env.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
  return env;
}

/** The working directory a stage's relative paths resolve against. */
export function workdir(stage: Stage): string {
  return last(stage, 'WORKDIR') ?? '/';
}

/** Where a health check command connects: host 127.0.0.1, a port (or PORT's fallback), a path. */
export function healthCheckTarget(command: string): { port: number; path: string } | undefined {
  const literal = /http:\/\/127\.0\.0\.1:(\d+)(\/[\w./-]*)/.exec(command);
  if (literal) return { port: Number(literal[1]), path: literal[2] };
  const fromEnv =
    /http:\/\/127\.0\.0\.1:' \+ \(process\.env\.PORT \|\| (\d+)\) \+ '(\/[\w./-]*)'/.exec(command);
  if (fromEnv) return { port: Number(fromEnv[1]), path: fromEnv[2] };
  return undefined;
}

export const { globalArgs: dockerArgs, stages: dockerfile } = parseDockerfile(read('Dockerfile'));
export const runtime = dockerfile.at(-1)!;

/**
 * `LABEL a="x" b=y` lines of a stage, merged, with `ARG` defaults substituted: the stage's own,
 * else the global one a bare `ARG NAME` in the stage brings in.
 */
export function stageLabels(stage: Stage): Map<string, string> {
  const argDefaults = new Map(
    all(stage, 'ARG').map((arg) => {
      const [name, ...value] = arg.split('=');
      return [name, value.length > 0 ? value.join('=') : (dockerArgs.get(name) ?? '')];
    }),
  );
  const labels = new Map<string, string>();
  for (const args of all(stage, 'LABEL')) {
    for (const [, name, quoted, bare] of args.matchAll(/([\w.-]+)=(?:"([^"]*)"|(\S+))/g)) {
      labels.set(
        name,
        (quoted ?? bare).replace(/\$\{(\w+)\}/g, (_, arg: string) => argDefaults.get(arg) ?? ''),
      );
    }
  }
  return labels;
}
