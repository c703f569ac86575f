// docs/runbooks/: one runbook per alert and one alert per runbook, each saying what the alert
// means, the first three commands to run, how to mitigate and when to escalate, with links that
// lead somewhere; the operations pages link every runbook. Procedures no alert fires (restore.md)
// live there too, named in lowercase so they are never taken for an alert's runbook, and must be
// linked from the docs that lead to them.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ruleGroups, WATCHDOG_ALERT } from '../../scripts/lib/prometheus-rules.mjs';
import { anchorsOf, brokenLinks, headingAnchor, relativeLinks } from '../support/markdown-links.js';
import { root } from '../support/project-files.js';
import { alertRules } from '../support/promql.js';

const RUNBOOKS = path.join(root, 'docs', 'runbooks');
const SECTIONS = ['What it means', 'First three commands', 'Mitigate', 'Escalate'];
const allFiles = readdirSync(RUNBOOKS)
  .filter((file) => file.endsWith('.md'))
  .sort();
/** An alert's runbook is named after the alert, which starts with a capital (UsersService…). */
const runbookFiles = allFiles.filter((file) => /^[A-Z]/.test(file));
/** Procedures: lowercase names, no alert of their own. */
const procedureFiles = allFiles.filter((file) => !/^[A-Z]/.test(file));

/** A runbook's `## ` sections by title. */
function sections(text: string): Map<string, string> {
  const parts = text.split(/^## /m).slice(1);
  return new Map(parts.map((part) => [part.split('\n')[0].trim(), part]));
}

describe('runbooks (docs/runbooks/)', () => {
  let alerts: string[];

  beforeAll(async () => {
    alerts = [...new Set(alertRules(await ruleGroups()).map((rule) => rule.alert))].sort();
  });

  it('has one runbook per alert and one alert per runbook', () => {
    expect(alerts.length).toBeGreaterThanOrEqual(16);
    expect(runbookFiles.map((file) => file.replace(/\.md$/, ''))).toEqual(alerts);
    // Every other file is a procedure, named so that no alert could share its name.
    for (const file of procedureFiles) expect(file).toMatch(/^[a-z][a-z0-9-]*\.md$/);
    expect(procedureFiles).toContain('restore.md');
  });

  it.each(procedureFiles)(
    '%s: a procedure with a title, steps in sh blocks, linked from docs/ beyond the runbook list',
    (file) => {
      const text = readFileSync(path.join(RUNBOOKS, file), 'utf8');
      expect(text.split('\n')[0]).toMatch(/^# \S/);
      expect(text).not.toMatch(/\*\*Severity:\*\*/);
      expect([...text.matchAll(/```sh\n/g)].length).toBeGreaterThan(0);
      expect(
        relativeLinks(path.join(RUNBOOKS, file)).filter((link) => /^\.\.\/[\w-]+\.md/.test(link))
          .length,
      ).toBeGreaterThan(0);
      // Reached from the page of its subject, not only from the list of runbooks.
      const linkedFrom = readdirSync(path.join(root, 'docs'))
        .filter((page) => page.endsWith('.md') && page !== 'monitoring.md')
        .filter((page) =>
          relativeLinks(path.join(root, 'docs', page)).includes(`runbooks/${file}`),
        );
      expect([file, linkedFrom.length > 0]).toEqual([file, true]);
    },
  );

  it.each(runbookFiles)('%s: means, first three commands, mitigate, escalate', (file) => {
    const text = readFileSync(path.join(RUNBOOKS, file), 'utf8');
    expect(text.split('\n')[0]).toBe(`# ${file.replace(/\.md$/, '')}`);
    const watchdog = file === `${WATCHDOG_ALERT}.md`;
    expect(text).toMatch(
      watchdog ? /\*\*Severity:\*\* none/ : /\*\*Severity:\*\* (critical|warning)/,
    );
    const found = sections(text);
    expect([...found.keys()]).toEqual(SECTIONS);
    for (const [title, body] of found)
      expect([title, body.trim().length > 80]).toEqual([title, true]);
    // Three commands, one a line, with the tools an on-call has: kubectl, curl and psql.
    const block = /```sh\n([\s\S]*?)```/.exec(found.get('First three commands')!)?.[1] ?? '';
    const commands = block.split('\n').filter((line) => line.trim() && !line.startsWith('#'));
    expect(commands).toHaveLength(3);
    for (const command of commands) expect(command).toMatch(/^(kubectl|curl|psql) /);
    // At least one document of docs/ explains the part of the service the alert is about.
    expect(
      relativeLinks(path.join(RUNBOOKS, file)).filter((link) => /^\.\.\/[\w-]+\.md/.test(link))
        .length,
    ).toBeGreaterThan(0);
  });

  it('links only to files and headings that exist, in the runbooks and the pages around them', () => {
    const pages = [
      ...allFiles.map((file) => path.join(RUNBOOKS, file)),
      ...[
        'docs/monitoring.md',
        'docs/slos.md',
        'docs/deploying.md',
        'docs/backup.md',
        'docs/oncall.md',
        'docs/design.md',
        'README.md',
        'SECURITY.md',
      ].map((file) => path.join(root, file)),
    ];
    for (const page of pages) {
      expect([path.relative(root, page), brokenLinks(page)]).toEqual([
        path.relative(root, page),
        [],
      ]);
    }
  });

  it('is listed, every runbook, on docs/monitoring.md, where their conventions are', () => {
    const monitoring = path.join(root, 'docs', 'monitoring.md');
    const links = relativeLinks(monitoring);
    for (const file of allFiles) expect(links).toContain(`runbooks/${file}`);
    expect(anchorsOf(monitoring).has('runbooks')).toBe(true);
  });

  it('the link check itself: GitHub anchors, and a missing file or heading is found', () => {
    expect(headingAnchor('Kubernetes (`k8s/`)')).toBe('kubernetes-k8s');
    expect(headingAnchor('Keys: boot, refresh and rotation')).toBe(
      'keys-boot-refresh-and-rotation',
    );
    expect(headingAnchor('Read replicas (`DATABASE_READ_URLS`)')).toBe(
      'read-replicas-database_read_urls',
    );
    const dir = mkdtempSync(path.join(os.tmpdir(), 'users-links-'));
    try {
      const page = path.join(dir, 'page.md');
      writeFileSync(
        page,
        '# Page\n\n## A section\n\n[ok](#a-section) [gone](#no-section) [missing](none.md) [web](https://example.com)\n',
      );
      expect(brokenLinks(page)).toEqual(['#no-section', 'none.md']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
