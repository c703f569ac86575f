import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The directory holding package.json and proto/: `src/` under Jest and `dist/src/` at run time
 * sit at different depths below it, so it is found by walking up.
 */
export function projectRoot(from = import.meta.dirname): string {
  let dir = from;
  while (!(existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'proto')))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no project root (package.json + proto/) above ${from}`);
    dir = parent;
  }
  return dir;
}
