// `npm run monitoring:retention`: a real Prometheus (Debian package `prometheus`) keeping its data
// for less than the SLOs' 30-day period is refused, naming the retention needed; one keeping it
// for the period passes. Skipped, saying so, where prometheus is missing.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { judgeRetention, REQUIRED_RETENTION } from '../../scripts/lib/prometheus-retention.mjs';
import { prometheusPath, startPrometheus } from '../../scripts/lib/prometheus-server.mjs';
import { PERIOD } from '../../scripts/lib/slo-rules.mjs';
import { read, root } from '../support/project-files.js';
import { describeWhenInstalled } from '../support/when-installed.js';

/** The check as an operator runs it, against a Prometheus keeping its data for `retention`. */
async function checkAgainst(retention: string) {
  const prometheus = await startPrometheus({
    job: 'none',
    targets: [],
    rules: 'groups: []\n',
    retention,
  });
  try {
    const { status, stdout } = spawnSync(
      process.execPath,
      [path.join(root, 'scripts/monitoring/check-retention.mjs'), prometheus.url],
      { encoding: 'utf8', timeout: 30_000 },
    );
    return { status, stdout };
  } finally {
    await prometheus.stop();
  }
}

describe('Prometheus retention for the SLO period', () => {
  it('needs the SLO period, as docs/monitoring.md states', () => {
    expect(REQUIRED_RETENTION).toBe(PERIOD);
    expect(read('docs/monitoring.md')).toContain(`retention of at least \`${PERIOD}\``);
    // Prometheus prints 30d as 4w2d; a size bound is reported beside the time.
    expect(judgeRetention('4w2d').ok).toBe(true);
    expect(judgeRetention('4w1d').ok).toBe(false);
    expect(judgeRetention('45d or 10GiB')).toEqual({
      ok: true,
      message: expect.stringContaining('the size bound 10GiB may delete sooner'),
    });
  });
});

describeWhenInstalled(
  'npm run monitoring:retention against a real Prometheus (e2e)',
  prometheusPath() ? [] : ['prometheus'],
  'apt-get install prometheus',
  () => {
    it('refuses kube-prometheus-stack’s default of 10 days, naming the retention needed', async () => {
      const { status, stdout } = await checkAgainst('10d');
      expect(status).toBe(1);
      expect(stdout).toContain(`retention 10d is shorter than the SLO period`);
      expect(stdout).toContain(`at least ${PERIOD}`);
    }, 60_000);

    it('accepts a Prometheus keeping 30 days', async () => {
      const { status, stdout } = await checkAgainst('30d');
      expect([status, stdout]).toEqual([
        0,
        expect.stringContaining('covers the SLO period of 30d'),
      ]);
    }, 60_000);
  },
);
