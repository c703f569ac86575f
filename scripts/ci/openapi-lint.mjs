// Lints the OpenAPI document the built service serves (GET /docs-json) with Redocly's
// `recommended` rules (redocly.yaml). Starts `node dist/src/main.js` on free ports with its
// embedded PostgreSQL in a temp directory, fetches the document, stops the service by PID and
// removes the directory. Needs `npm run build` first. The document is kept as dist/openapi.json,
// the path .redocly.lint-ignore.yaml names. Exits with redocly's status: 1 on an error that file
// does not list, 0 when only warnings remain (they are printed).
//
//   node scripts/ci/openapi-lint.mjs
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cleanupOnExit } from '../lib/cleanup.mjs';
import { fetchServedDocument } from '../lib/openapi-document.mjs';

const root = path.resolve(import.meta.dirname, '..', '..');
const redocly = path.join(root, 'node_modules', '.bin', 'redocly');
const log = (...args) => console.error('openapi-lint:', ...args);
const documentFile = path.join('dist', 'openapi.json');

const { cleanups, cleanup } = cleanupOnExit({ what: 'openapi-lint', log });

async function main() {
  const document = await fetchServedDocument({ cleanups, name: 'openapi-lint' });
  await cleanup();

  await writeFile(path.join(root, documentFile), document);
  // redocly.yaml in the project root selects the rules; a relative path, as the ignore file has it.
  const lint = spawnSync(redocly, ['lint', documentFile, '--format', 'stylish'], {
    cwd: root,
    stdio: 'inherit',
    // CI has no business phoning home or nagging about updates.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  return lint.status ?? 1;
}

main().then(
  (code) => process.exit(code),
  async (error) => {
    log(error instanceof Error ? error.message : error);
    await cleanup();
    process.exit(1);
  },
);
