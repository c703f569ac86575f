// What the deployment files are checked against: the project's own files (package.json,
// tsconfig, nest-cli.json, .env.example) and what the code says (environment variables, routes).
// Read once, when a deployment spec loads it; static only.
import 'reflect-metadata';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { EnvironmentVariables } from '../../src/config/env.validation.js';
import { HealthController } from '../../src/health/health.controller.js';

export const root = path.resolve(import.meta.dirname, '..', '..');
export const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');
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
export const pkg = readJson<PackageJson>('package.json');
export const nestCli = readJson<{ entryFile: string; compilerOptions?: { tsConfigPath?: string } }>(
  'nest-cli.json',
);
export const tsconfig = readJson<{ compilerOptions: { outDir: string; rootDir: string } }>(
  'tsconfig.json',
);
export const tsconfigBuild = readJson<{ include: string[] }>(
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
export const envExample = parseEnvFile(read('.env.example'));

/** Preloaded with `node --import` by every start (tracing must start before what it instruments). */
export const TELEMETRY_SOURCE = 'src/telemetry.ts';
export const telemetryEntry = () =>
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
export const envClassNames = environmentVariableNames();
export const envDefaults = new EnvironmentVariables();

/** The path of a GET handler, from Nest's own route metadata. */
export function getRoute(controller: object, method: (...args: never[]) => unknown): string {
  expect(Reflect.getMetadata(METHOD_METADATA, method)).toBe(RequestMethod.GET);
  const parts = [
    Reflect.getMetadata(PATH_METADATA, controller) as string,
    Reflect.getMetadata(PATH_METADATA, method) as string,
  ];
  return '/' + parts.flatMap((part) => part.split('/').filter(Boolean)).join('/');
}

/** GET routes of HealthController, by handler name. */
export function healthRoute(handler: 'live' | 'ready'): string {
  return getRoute(HealthController, HealthController.prototype[handler]);
}

/** `npm run <script>` as an argv array -> the script name, or undefined for anything else. */
export function npmRunScript(argv: unknown): string | undefined {
  if (typeof argv === 'string') argv = argv.trim().split(/\s+/);
  if (!Array.isArray(argv) || argv[0] !== 'npm') return undefined;
  if (argv[1] === 'run' || argv[1] === 'run-script') return argv[2];
  return undefined;
}

export const defaultPort = envDefaults.PORT;
export const defaultGrpcPort = envDefaults.GRPC_PORT;
export const defaultMetricsPort = envDefaults.METRICS_PORT;
/** The namespace label that grants access to the API ports (networkpolicy.yaml). */
export const CLIENT_NAMESPACE_LABEL = 'users-service/client';
