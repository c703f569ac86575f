// The code the deployment files run is where they say: routes, entry files, migration scripts,
// environment variables, and only production dependencies on the service's paths.
import { existsSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import {
  defaultGrpcPort,
  defaultPort,
  envClassNames,
  envDefaults,
  envExample,
  healthRoute,
  nestCli,
  pkg,
  read,
  root,
  TELEMETRY_SOURCE,
  telemetryEntry,
  tsconfig,
  tsconfigBuild,
} from '../support/project-files.js';

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
