// The generated rules under promtool from the Debian package `prometheus`: `promtool check rules`
// accepts them and `promtool test rules` passes the unit tests of monitoring/tests/, which fire
// every alert (each severity of each SLO alert). Skipped, saying so, where promtool is missing;
// .ci/run installs it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ruleGroups, WATCHDOG_ALERT } from '../../scripts/lib/prometheus-rules.mjs';
import {
  checkAndTestRules,
  RULE_TESTS_DIR,
  RULES_FILE_NAME,
  ruleTestFiles,
} from '../../scripts/lib/promtool.mjs';
import { findTool } from '../../scripts/lib/system-tools.mjs';
import { alertRules } from '../support/promql.js';
import { describeWhenInstalled } from '../support/when-installed.js';

const PROMTOOL = findTool('promtool');

interface RuleTestFile {
  rule_files: string[];
  tests: {
    name: string;
    alert_rule_test?: {
      eval_time: string;
      alertname: string;
      exp_alerts: { exp_labels?: Record<string, string> }[];
    }[];
  }[];
}

describeWhenInstalled(
  'Prometheus rules under promtool (Debian prometheus)',
  PROMTOOL ? [] : ['promtool'],
  'apt-get install prometheus',
  () => {
    let result: Awaited<ReturnType<typeof checkAndTestRules>>;

    beforeAll(async () => {
      result = await checkAndTestRules(PROMTOOL!);
    }, 180_000);

    it('passes `promtool check rules`', () => {
      console.log(`promtool (${PROMTOOL}) check rules:\n${result.check.output}`);
      expect(result.check.status).toBe(0);
      expect(result.check.output).toMatch(/SUCCESS: \d+ rules found/);
    });

    it('passes `promtool test rules` for every test file of monitoring/tests/', () => {
      console.log(`promtool test rules ${result.testFiles.join(' ')}:\n${result.test.output}`);
      expect(result.test.status).toBe(0);
      expect(result.testFiles.length).toBeGreaterThanOrEqual(2);
      for (const file of result.testFiles) {
        expect(result.test.output).toMatch(new RegExp(`Unit Testing:\\s+${file}\\s+SUCCESS`));
      }
    });

    it('fires every alert at each of its severities in some test, and finds one quiet', async () => {
      const files = await ruleTestFiles();
      const cases = files.flatMap((file) => {
        const tests = parse(readFileSync(path.join(RULE_TESTS_DIR, file), 'utf8')) as RuleTestFile;
        expect(tests.rule_files).toEqual([RULES_FILE_NAME]);
        return tests.tests.flatMap((test) => test.alert_rule_test ?? []);
      });
      const fired = new Set(
        cases.flatMap(({ alertname, exp_alerts }) =>
          exp_alerts.map((alert) => `${alertname} ${alert.exp_labels?.severity}`),
        ),
      );
      const quiet = new Set(
        cases.filter((c) => c.exp_alerts.length === 0).map(({ alertname }) => alertname),
      );
      const alerts = alertRules(await ruleGroups());
      for (const { alert, labels } of alerts) {
        expect([alert, fired.has(`${alert} ${labels?.severity}`)]).toEqual([alert, true]);
      }
      // And each has a case where it must stay quiet (before its `for`, or below its bound), but
      // the watchdog, which fires from the first evaluation without any series.
      for (const { alert } of alerts) {
        expect([alert, quiet.has(alert)]).toEqual([alert, alert !== WATCHDOG_ALERT]);
      }
      const watchdog = cases.filter(({ alertname }) => alertname === WATCHDOG_ALERT);
      expect(watchdog.map((c) => [c.eval_time, c.exp_alerts.length])).toEqual([
        ['0m', 1],
        ['1d', 1],
      ]);
    });
  },
);
