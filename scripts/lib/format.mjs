// Generated files are written as the repository's Prettier settings format them, so that
// `npm run lint` (prettier --check) accepts them and a spec can compare them byte for byte.
import path from 'node:path';
import * as prettier from 'prettier';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/**
 * `text` formatted as Prettier formats `file` (relative to the repository root, or absolute):
 * the parser follows its extension, the settings come from the repository's configuration.
 * @param {string} file
 * @param {string} text
 * @returns {Promise<string>}
 */
export async function formatAs(file, text) {
  const filepath = path.resolve(ROOT, file);
  const options = (await prettier.resolveConfig(filepath)) ?? {};
  return prettier.format(text, { ...options, filepath });
}
