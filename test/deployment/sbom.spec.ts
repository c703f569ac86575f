// `npm run sbom`: a CycloneDX SBOM of what the image installs (the production dependencies, at
// the lockfile's versions, each with an npm purl and a hash), and the check CI runs on it, which
// refuses an SBOM missing a dependency or listing a development-only one.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sbomProblems, type Sbom } from '../../scripts/lib/sbom.mjs';
import { pkg, root } from '../support/project-files.js';

describe('npm run sbom', () => {
  let sbom: Sbom;
  let status: number | null;

  beforeAll(() => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'users-sbom-'));
    try {
      const output = path.join(dir, 'sbom.cdx.json');
      ({ status } = spawnSync(
        process.execPath,
        [path.join(root, 'scripts/sbom.mjs'), '--output', output],
        {
          cwd: root,
          encoding: 'utf8',
          timeout: 60_000,
        },
      ));
      sbom = JSON.parse(readFileSync(output, 'utf8')) as Sbom;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('writes CycloneDX JSON of the production dependencies, which its check accepts', () => {
    expect(status).toBe(0);
    expect([sbom.bomFormat, sbom.specVersion]).toEqual([
      'CycloneDX',
      expect.stringMatching(/^1\./),
    ]);
    expect(sbomProblems(sbom)).toEqual([]);
    const names = new Set(sbom.components.map((component) => component.name));
    for (const name of Object.keys(pkg.dependencies))
      expect([name, names.has(name)]).toEqual([name, true]);
    // Test and build tools ship in no image.
    for (const name of ['jest', 'eslint', '@nestjs/cli', 'prettier']) {
      expect([name, names.has(name)]).toEqual([name, false]);
    }
  });

  it('the check refuses an SBOM missing a dependency or listing a development-only one', () => {
    const without = { ...sbom, components: sbom.components.filter((c) => c.name !== 'pg') };
    expect(sbomProblems(without)).toEqual([
      expect.stringMatching(/^pg@[\d.]+ \(package-lock\.json\) is missing$/),
    ]);
    const jest = {
      name: 'jest',
      version: (pkg as unknown as { devDependencies: Record<string, string> }).devDependencies.jest,
    };
    const withDev = { ...sbom, components: [...sbom.components, jest] };
    expect(sbomProblems(withDev)).toEqual([
      `jest@${jest.version}, a development dependency, is listed`,
    ]);
  });
});
