// `npm run openapi`: writes the OpenAPI document the built service serves (GET /docs-json) to
// openapi.json at the project root, formatted as the repository's Prettier settings format it.
// The file is committed so that every change to the HTTP API shows in review;
// test/api/openapi-document.e2e-spec.ts fails while the served document and the file differ.
//
//   npm run openapi            (builds first when the sources are newer than dist/)
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as prettier from 'prettier';
import { cleanupOnExit } from './lib/cleanup.mjs';
import { fetchServedDocument } from './lib/openapi-document.mjs';

const root = path.resolve(import.meta.dirname, '..');
const target = path.join(root, 'openapi.json');
const log = (...args) => console.error('openapi:', ...args);
const { cleanups, cleanup } = cleanupOnExit({ what: 'openapi', log });

async function main() {
  const document = JSON.parse(await fetchServedDocument({ cleanups }));
  await cleanup();
  const options = (await prettier.resolveConfig(target)) ?? {};
  await writeFile(
    target,
    await prettier.format(JSON.stringify(document), { ...options, filepath: target }),
  );
  log(`wrote ${path.relative(process.cwd(), target) || target}`);
}

main().then(
  () => process.exit(0),
  async (error) => {
    log(error instanceof Error ? error.message : error);
    await cleanup();
    process.exit(1);
  },
);
