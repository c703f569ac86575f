// The service's software bill of materials: CycloneDX JSON from `npm sbom` over the lockfile,
// production dependencies only (what the image installs: `npm ci --omit=dev`), and the check CI runs on it: every
// dependency of package.json listed at the version the lockfile resolves, with an npm purl and a
// hash a scanner can match.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/**
 * @typedef {object} SbomComponent
 * @property {string} name
 * @property {string} version
 * @property {string} [purl]
 * @property {string} [scope]
 * @property {{ alg: string; content: string }[]} [hashes]
 */
/** @typedef {{ bomFormat: string; specVersion: string; metadata?: { component?: { purl?: string } }; components: SbomComponent[] }} Sbom */

/** @param {string} file */
const readJson = (file) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'));

/**
 * `npm sbom` of the repository from package-lock.json, kept to the production dependencies. npm's
 * own `--omit dev` also drops production packages that a development one depends on too (npm
 * 11: @nestjs/common, rxjs), so the lockfile's `dev` marks decide instead.
 * @returns {Sbom}
 */
export function generateSbom() {
  const text = execFileSync('npm', ['sbom', '--sbom-format', 'cyclonedx', '--package-lock-only'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const sbom = JSON.parse(text);
  const lock = readJson('package-lock.json');
  const production = new Set(
    Object.entries(lock.packages)
      .filter(([where, entry]) => where !== '' && !entry.dev)
      .map(
        ([where, entry]) => `${entry.name ?? where.split('node_modules/').at(-1)}@${entry.version}`,
      ),
  );
  const kept = (/** @type {string} */ ref) => production.has(ref);
  return {
    ...sbom,
    components: sbom.components.filter((/** @type {{ 'bom-ref': string }} */ c) =>
      kept(c['bom-ref']),
    ),
    dependencies: (sbom.dependencies ?? [])
      .filter(
        (/** @type {{ ref: string }} */ d) =>
          d.ref === sbom.metadata?.component?.['bom-ref'] || kept(d.ref),
      )
      .map((/** @type {{ ref: string; dependsOn?: string[] }} */ d) => ({
        ...d,
        dependsOn: (d.dependsOn ?? []).filter(kept),
      })),
  };
}

/**
 * What is wrong with an SBOM of this repository (nothing: an empty list).
 * @param {Sbom} sbom
 * @returns {string[]}
 */
export function sbomProblems(sbom) {
  const pkg = readJson('package.json');
  const lock = readJson('package-lock.json');
  const problems = [];
  if (sbom.bomFormat !== 'CycloneDX') problems.push(`bomFormat ${sbom.bomFormat}, not CycloneDX`);
  if (!/^1\.[4-9]$/.test(sbom.specVersion)) problems.push(`specVersion ${sbom.specVersion}`);
  if (sbom.metadata?.component?.purl !== `pkg:npm/${pkg.name}@${pkg.version}`) {
    problems.push(`metadata.component is not ${pkg.name}@${pkg.version}`);
  }
  const listed = new Map(sbom.components.map((c) => [`${c.name}@${c.version}`, c]));
  for (const name of Object.keys(pkg.dependencies)) {
    const version = lock.packages[`node_modules/${name}`]?.version;
    const component = listed.get(`${name}@${version}`);
    if (!component) problems.push(`${name}@${version} (package-lock.json) is missing`);
    else if (!component.purl?.startsWith('pkg:npm/') || !component.hashes?.length) {
      problems.push(`${name}@${version} has no npm purl or no hash`);
    }
  }
  // A package only development needs (the lockfile marks it `dev`) ships in no image.
  for (const name of Object.keys(pkg.devDependencies)) {
    const { version, dev } = lock.packages[`node_modules/${name}`] ?? {};
    if (dev && listed.has(`${name}@${version}`)) {
      problems.push(`${name}@${version}, a development dependency, is listed`);
    }
  }
  return problems;
}
