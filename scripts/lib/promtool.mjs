// promtool (Debian package `prometheus`) on the service's rules: `promtool check rules` on the
// generated rule file and `promtool test rules` on the unit tests of monitoring/tests/, which name
// the rules `users-service.rules.yaml`: both are written to a temp directory together, the
// tests' runbook base URL and team tokens replaced by the configured ones. Shared by
// `npm run monitoring:test` and test/operations/promtool.spec.ts.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { renderRuleFile, RUNBOOK_BASE_URL, TEAM } from './prometheus-rules.mjs';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const RULE_TESTS_DIR = path.join(ROOT, 'monitoring', 'tests');
/**
 * Stands for RUNBOOK_BASE_URL in the tests' expected runbook_url, so they follow ownership.yaml.
 */
export const RUNBOOK_BASE_TOKEN = '<runbook-base-url>/';
/** Stands for the `team` label of every alert (TEAM), so the tests follow ownership.yaml too. */
export const TEAM_TOKEN = '<team>';
/** The rule file's name in the tests' `rule_files:`. */
export const RULES_FILE_NAME = 'users-service.rules.yaml';
/** promtool evaluates hours of series per test file in seconds; this bounds a hang. */
const PROMTOOL_TIMEOUT_MS = 120_000;

/**
 * @typedef {object} PromtoolRun
 * @property {number | null} status exit code (null: killed at the time bound)
 * @property {string} output stdout and stderr
 */

/**
 * The unit test files, by name.
 * @returns {Promise<string[]>}
 */
export async function ruleTestFiles() {
  return (await readdir(RULE_TESTS_DIR)).filter((file) => file.endsWith('.test.yaml')).sort();
}

/**
 * @param {string} promtool
 * @param {string[]} args
 * @param {string} cwd
 * @returns {PromtoolRun}
 */
function run(promtool, args, cwd) {
  const { status, stdout, stderr, error } = spawnSync(promtool, args, {
    cwd,
    encoding: 'utf8',
    timeout: PROMTOOL_TIMEOUT_MS,
  });
  return { status, output: `${stdout ?? ''}${stderr ?? ''}${error ? `\n${error.message}` : ''}` };
}

/**
 * Writes the generated rules and the unit tests to a temp directory, runs `promtool check rules`
 * and `promtool test rules` there, and removes it.
 * @param {string} promtool its path (system-tools.mjs findTool)
 * @returns {Promise<{ check: PromtoolRun; test: PromtoolRun; testFiles: string[] }>}
 */
export async function checkAndTestRules(promtool) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'users-promtool-'));
  try {
    await writeFile(path.join(dir, RULES_FILE_NAME), await renderRuleFile());
    const testFiles = await ruleTestFiles();
    for (const file of testFiles) {
      const text = await readFile(path.join(RULE_TESTS_DIR, file), 'utf8');
      await writeFile(
        path.join(dir, file),
        text.replaceAll(RUNBOOK_BASE_TOKEN, RUNBOOK_BASE_URL).replaceAll(TEAM_TOKEN, TEAM),
      );
    }
    return {
      check: run(promtool, ['check', 'rules', RULES_FILE_NAME], dir),
      test: run(promtool, ['test', 'rules', ...testFiles], dir),
      testFiles,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
