// `npm run monitoring:test`: `promtool check rules` on the generated rules and `promtool test
// rules` on monitoring/tests/ (scripts/lib/promtool.mjs). Needs promtool (Debian: `apt-get install
// prometheus`); test/operations/promtool.spec.ts runs the same in the test suite.
import { checkAndTestRules } from '../lib/promtool.mjs';
import { findTool } from '../lib/system-tools.mjs';

const promtool = findTool('promtool');
if (!promtool) {
  console.error('monitoring:test: promtool not installed (Debian package `prometheus`)');
  process.exit(1);
}
const { check, test } = await checkAndTestRules(promtool);
console.log(`promtool check rules\n${check.output}\npromtool test rules\n${test.output}`);
process.exit(check.status === 0 && test.status === 0 ? 0 : 1);
