// `node scripts/install-node.mjs [24 | 24.18.0]`: installs the pinned Node 24 (.nvmrc) with npm
// into a cache outside the repository (scripts/lib/node-runtime.mjs) and prints the path of its
// `node`. .ci/run runs the whole test suite again on it.
import { resolveNode } from './lib/node-runtime.mjs';

try {
  const runtime = resolveNode(process.argv[2] ?? '24', { log: (line) => console.error(line) });
  console.log(runtime.path);
} catch (error) {
  console.error(`Node runtime not available: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
