// The runtimes the project says it supports are the ones it tests: package.json `engines`
// accepts the machines' Node 20 (20.20 and later) and Node 24, `.nvmrc` pins the exact Node 24
// the image and CI run (scripts/lib/node-runtime.mjs installs it), and the Dockerfile's base
// image is that major.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pinnedNodeVersion } from '../../scripts/lib/node-runtime.mjs';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('supported Node runtimes', () => {
  const pkg = JSON.parse(read('package.json')) as { engines?: { node?: string } };
  const alternatives = (pkg.engines?.node ?? '').split('||').map((range) => range.trim());

  it('engines: Node 20 from 20.20, and Node 24', () => {
    expect(alternatives).toEqual(['^20.20.0', '^24.0.0']);
  });

  it('.nvmrc pins an exact Node 24, the major of the Dockerfile base image', () => {
    const pinned = pinnedNodeVersion();
    expect(pinned).toMatch(/^24\.\d+\.\d+$/);
    const tag = /^ARG NODE_TAG=(\d+)-/m.exec(read('Dockerfile'))?.[1];
    expect(tag).toBe(pinned.split('.')[0]);
  });

  it('.ci/run installs that runtime and runs the whole suite on it after the machine one', () => {
    const ci = read('.ci/run');
    expect(ci).toMatch(/NODE24=\$\(node scripts\/install-node\.mjs 24\)/);
    const runs = [...ci.matchAll(/^\s*(PATH="\$\(dirname "\$NODE24"\):\$PATH" )?.*\bnpm test$/gm)];
    expect(runs.filter((run) => run[1] === undefined)).toHaveLength(1);
    expect(runs.filter((run) => run[1] !== undefined).length).toBeGreaterThanOrEqual(1);
  });
});
