// The README's configuration table names every variable the service reads: each one .env.example
// lists (set or shown commented out) and each property of the validated environment.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { validateEnv } from '../../src/config/env.validation.js';
import { projectRoot } from '../../src/project-root.js';

const root = projectRoot();
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const configuration = readme.split(/^## /m).find((part) => part.startsWith('Configuration')) ?? '';
const inTable = (name: string) => configuration.includes(`| \`${name}\``);

describe('README configuration table', () => {
  it('lists every variable of .env.example', () => {
    const example = readFileSync(path.join(root, '.env.example'), 'utf8');
    const names = [...example.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map(([, name]) => name);
    expect(names).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL']));
    expect(names.filter((name) => !inTable(name))).toEqual([]);
  });

  it('lists every variable the service validates at boot, with its default', () => {
    const env = validateEnv({}) as unknown as Record<string, unknown>;
    const withDefaults = Object.keys(env).filter((name) => env[name] !== undefined);
    expect(withDefaults).toEqual(expect.arrayContaining(['PORT', 'GRPC_PORT']));
    expect(withDefaults.filter((name) => !inTable(name))).toEqual([]);
  });

  it('the check itself: a row is recognised only as a table cell', () => {
    expect(inTable('PORT')).toBe(true);
    expect(inTable('NO_SUCH_VARIABLE')).toBe(false);
  });
});
