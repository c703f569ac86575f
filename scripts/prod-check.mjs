// `npm run prod:check [-- <overlay directory>]`: renders the prod overlay as `kubectl apply -k`
// would (`kubectl kustomize`) and refuses it (exit 1) while it names the placeholder
// organisation of ownership.yaml (alerts whose runbook_url leads nowhere) or the placeholder
// image digest. Run it before applying the overlay (docs/releasing.md).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { PLACEHOLDER_DIGEST } from './lib/image-pin.mjs';
import { PLACEHOLDER, placeholderLines } from './lib/ownership.mjs';

const overlay =
  process.argv[2] ?? path.resolve(import.meta.dirname, '..', 'k8s', 'overlays', 'prod');
const rendered = execFileSync('kubectl', ['kustomize', overlay], {
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
/** @type {string[]} */
const problems = [];
if (rendered.includes(PLACEHOLDER_DIGEST)) {
  problems.push(
    `pins the placeholder digest ${PLACEHOLDER_DIGEST}: pin the release's image with npm run release:pin (docs/releasing.md)`,
  );
}
const found = placeholderLines(rendered);
if (found.length > 0) {
  problems.push(
    `names the placeholder ${PLACEHOLDER} on ${found.length} lines, e.g.\n  ${found.slice(0, 3).join('\n  ')}\nSet team and repository in ownership.yaml, run npm run ownership and commit`,
  );
}
if (problems.length > 0) {
  console.error(
    problems.map((problem) => `prod:check: the render of ${overlay} ${problem}.`).join('\n'),
  );
  process.exit(1);
}
console.log(`prod:check: ${overlay}: no placeholder`);
