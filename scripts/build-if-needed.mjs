// Builds dist/ when it is missing or older than the sources. In a production image there are no
// sources (only dist/), so nothing is built there.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '..');
export const entry = path.join(root, 'dist', 'src', 'main.js');
/** Preloaded before `entry` (`node --import`): starts tracing when an OTLP endpoint is set. */
export const telemetryEntry = path.join(root, 'dist', 'src', 'telemetry.js');

function newestMtime(target) {
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(target))
    newest = Math.max(newest, newestMtime(path.join(target, name)));
  return newest;
}

export function buildIfNeeded() {
  const sources = ['src', 'migrations', 'tsconfig.json', 'tsconfig.build.json']
    .map((name) => path.join(root, name))
    .filter((source) => existsSync(source));
  if (!existsSync(path.join(root, 'src'))) return;
  if (existsSync(entry) && statSync(entry).mtimeMs >= Math.max(...sources.map(newestMtime))) return;
  console.log('building the service (nest build)…');
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
}

if (process.argv[1] === import.meta.filename) buildIfNeeded();
