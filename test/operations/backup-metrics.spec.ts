// The age of the backups, from the pgBackRest repository host to the alert: what
// deploy/backup/pgbackrest-metrics.sh writes from `pgbackrest info --output=json` (the fixtures are
// the output of pgBackRest 2.45: a repository holding a full, a differential and an incremental
// backup of a drill's cluster, and a stanza without any), that it leaves the previous file when
// `info` fails, that UsersServiceBackupTooOld reads only what it writes, and that the alert's bounds
// follow the schedule of deploy/backup/pgbackrest.cron.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ruleGroups } from '../../scripts/lib/prometheus-rules.mjs';
import { findTool } from '../../scripts/lib/system-tools.mjs';
import { metricNames } from '../support/promql.js';
import { read, root } from '../support/project-files.js';
import { describeWhenInstalled } from '../support/when-installed.js';

const SCRIPT = path.join(root, 'deploy/backup/pgbackrest-metrics.sh');
const FIXTURES = path.join(root, 'test/operations/fixtures');
const BACKUP_GROUP = 'users-service-backups';
const ALERT = 'UsersServiceBackupTooOld';
const JQ = findTool('jq');
const PROMTOOL = findTool('promtool');
const HOUR = 3600;
const DAY = 24 * HOUR;

interface Info {
  name: string;
  backup: { type: string; timestamp: { stop: number } }[];
}

/** Sample lines of an exposition, as `name{labels}` -> value. */
function samples(text: string): Map<string, number> {
  return new Map(
    text
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => {
        const at = line.lastIndexOf(' ');
        return [line.slice(0, at), Number(line.slice(at + 1))];
      }),
  );
}

/** The bound, in seconds, an alert expression compares `time() - max(...{selector})` with. */
function bound(expr: string, selector: string): number {
  const branch = expr.split('\nor\n').find((part) => part.includes(`{${selector}}`));
  const [, a, b] = /> (\d+) \* (\d+)\s*$/.exec(branch?.trim() ?? '') ?? [];
  return Number(a) * Number(b);
}

describeWhenInstalled(
  'backup age metrics (deploy/backup)',
  JQ ? [] : ['jq'],
  'apt-get install jq',
  () => {
    let dir: string;

    /** The script on `stanza`, `pgbackrest` answering with `fixture` (or failing without one). */
    function run(stanza: string, fixture?: string) {
      const stub = path.join(dir, 'pgbackrest');
      writeFileSync(
        stub,
        fixture
          ? `#!/bin/sh\necho "$*" > "${dir}/args"\ncat "${path.join(FIXTURES, fixture)}"\n`
          : '#!/bin/sh\necho "ERROR: [049]: unable to reach the repository" >&2\nexit 49\n',
        { mode: 0o755 },
      );
      return spawnSync('sh', [SCRIPT, stanza, dir], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, PGBACKREST: stub },
      });
    }
    const prom = (stanza: string) => path.join(dir, `pgbackrest-${stanza}.prom`);

    beforeEach(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'users-backup-metrics-'));
    });

    afterEach(() => {
      rmSync(dir, { recursive: true, force: true });
    });

    it("writes the stop time of the newest backup of each type, the stanza's status and when", () => {
      const before = Math.floor(Date.now() / 1000);
      const { status, stderr } = run('users', 'pgbackrest-info.json');
      expect([status, stderr]).toEqual([0, '']);
      expect(readFileSync(path.join(dir, 'args'), 'utf8').trim()).toBe(
        '--stanza=users --output=json info',
      );
      const [info] = JSON.parse(
        readFileSync(path.join(FIXTURES, 'pgbackrest-info.json'), 'utf8'),
      ) as Info[];
      const newest = (type: string) =>
        Math.max(...info.backup.filter((b) => b.type === type).map((b) => b.timestamp.stop));
      const written = samples(readFileSync(prom('users'), 'utf8'));
      expect(
        written.get('pgbackrest_metrics_written_timestamp_seconds{stanza="users"}'),
      ).toBeGreaterThanOrEqual(before);
      written.delete('pgbackrest_metrics_written_timestamp_seconds{stanza="users"}');
      expect(Object.fromEntries(written)).toEqual({
        'pgbackrest_backup_last_stop_timestamp_seconds{stanza="users",type="diff"}': newest('diff'),
        'pgbackrest_backup_last_stop_timestamp_seconds{stanza="users",type="full"}': newest('full'),
        'pgbackrest_backup_last_stop_timestamp_seconds{stanza="users",type="incr"}': newest('incr'),
        'pgbackrest_stanza_status_code{stanza="users"}': 0,
      });
      // Three backups of three types, one after another: each type its own stop time.
      expect(new Set(info.backup.map((b) => b.timestamp.stop)).size).toBe(3);
      // Only the finished file, nothing node_exporter could read half-written.
      expect(readdirSync(dir).filter((file) => file.includes('.tmp'))).toEqual([]);
    });

    it('writes no backup time for a stanza without backups, so the alert sees none', () => {
      const { status } = run('users', 'pgbackrest-info-no-stanza.json');
      expect(status).toBe(0);
      const written = samples(readFileSync(prom('users'), 'utf8'));
      expect([...written.keys()].filter((key) => key.includes('last_stop'))).toEqual([]);
      expect(written.get('pgbackrest_stanza_status_code{stanza="users"}')).toBe(1);
    });

    it('leaves the previous file as it was when pgbackrest info fails, and says so', () => {
      expect(run('users', 'pgbackrest-info.json').status).toBe(0);
      const previous = readFileSync(prom('users'), 'utf8');
      const failed = run('users');
      expect(failed.status).not.toBe(0);
      expect(failed.stderr).toContain('unable to reach the repository');
      expect(readFileSync(prom('users'), 'utf8')).toBe(previous);
      // A stanza the repository does not list is an error too, and writes nothing.
      const other = run('other', 'pgbackrest-info.json');
      expect([other.status === 0, existsSync(prom('other'))]).toEqual([false, false]);
      expect(other.stderr).toContain('stanza other is not in pgbackrest info');
      expect(readdirSync(dir).filter((file) => file.includes('.tmp'))).toEqual([]);
    });

    (PROMTOOL ? it : it.skip)('writes what `promtool check metrics` accepts', () => {
      expect(run('users', 'pgbackrest-info.json').status).toBe(0);
      const check = spawnSync(PROMTOOL!, ['check', 'metrics'], {
        input: readFileSync(prom('users')),
        encoding: 'utf8',
      });
      expect([check.status, check.stdout, check.stderr]).toEqual([0, '', '']);
    });

    it('UsersServiceBackupTooOld reads only the metrics the script writes', async () => {
      expect(run('users', 'pgbackrest-info.json').status).toBe(0);
      const declared = new Set(
        [...readFileSync(prom('users'), 'utf8').matchAll(/^# TYPE (\S+) gauge$/gm)].map(
          ([, name]) => name,
        ),
      );
      expect(declared.size).toBe(3);
      const rules = (await ruleGroups()).find((group) => group.name === BACKUP_GROUP)?.rules ?? [];
      expect(rules.map((rule) => rule.alert)).toEqual([ALERT]);
      for (const rule of rules) {
        const names = metricNames(rule.expr);
        expect(names.length).toBeGreaterThan(0);
        expect(names.filter((name) => !declared.has(name))).toEqual([]);
      }
    });
  },
);

describe('the backup schedule and the alert on it', () => {
  const cron = read('deploy/backup/pgbackrest.cron')
    .split('\n')
    .filter((line) => /^[\d*]/.test(line))
    .map((line) => {
      const [minute, hour, dom, month, dow, user, ...command] = line.split(/\s+/);
      return { minute, hour, dom, month, dow, user, command: command.join(' ') };
    });
  /** The weekdays (0-6) a day-of-week field names. */
  const days = (field: string) =>
    field === '*'
      ? [0, 1, 2, 3, 4, 5, 6]
      : field.split(',').flatMap((part) => {
          const [from, to = from] = part.split('-').map(Number);
          return Array.from({ length: to - from + 1 }, (_, i) => from + i);
        });
  const backups = (type: string) =>
    cron.filter((entry) => entry.command.includes(`--type=${type} backup`));

  it('backs up in full once a week and differentially every other day, once a day, then writes the metrics', () => {
    const [full, ...moreFull] = backups('full');
    expect(moreFull).toEqual([]);
    expect([full.dom, full.month, days(full.dow)]).toEqual(['*', '*', [0]]);
    const daily = [...backups('full'), ...backups('diff')];
    expect(daily.flatMap((entry) => days(entry.dow)).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const entry of daily) {
      expect([entry.minute, entry.hour, entry.user]).toEqual([full.minute, full.hour, 'postgres']);
      // Written after the backup whatever its outcome, so a failure shows as an older age.
      expect(entry.command).toMatch(/ backup; pgbackrest-metrics users$/);
      expect(entry.command).toContain('--stanza=users');
    }
    // And on its own, so the file follows expiry and backups run by hand.
    expect(cron.filter((entry) => entry.command === 'pgbackrest-metrics users')).toEqual([
      expect.objectContaining({ minute: '*/15', hour: '*', dow: '*', user: 'postgres' }),
    ]);
  });

  it('allows each kind of backup its schedule and at most a quarter of it again', async () => {
    const rule = (await ruleGroups())
      .flatMap((group) => group.rules)
      .find((r) => r.alert === ALERT)!;
    const anyBackup = bound(rule.expr, 'stanza="users"');
    const fullBackup = bound(rule.expr, 'stanza="users", type="full"');
    // The daily backup (full or differential), then the weekly full one.
    expect(anyBackup).toBeGreaterThan(DAY);
    expect(anyBackup).toBeLessThanOrEqual(1.25 * DAY);
    expect(fullBackup).toBeGreaterThan(7 * DAY);
    expect(fullBackup).toBeLessThanOrEqual(7 * DAY + 0.25 * DAY);
    // And none reported at all is an alert too.
    expect(rule.expr).toContain(
      'absent(pgbackrest_backup_last_stop_timestamp_seconds{stanza="users"})',
    );
    expect(rule.labels?.severity).toBe('warning');
  });
});
