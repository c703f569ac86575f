// `npm run migration:run` as the Kubernetes migration Job runs it, minus the build check (the
// caller builds first, with buildService): the TypeORM CLI on the built data source, as a
// process of its own with nothing of this process's environment but PATH and HOME.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';

const ROOT = projectRoot();
const TYPEORM_CLI = path.join(ROOT, 'node_modules', 'typeorm', 'cli.js');
/** A Job that runs longer than this is killed. */
const TIMEOUT_MS = 60_000;

/** Resolves with the CLI's exit code and output. */
export function migrationJob(
  databaseUrl: string,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    process.execPath,
    [TYPEORM_CLI, 'migration:run', '-d', 'dist/src/data-source.js'],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}
