// The owner and the repository of the service (ownership.yaml), and the files that name them:
// CODEOWNERS, catalog-info.yaml and the Alertmanager routing example, written from them here, and
// the alerts' runbook_url and `team` label (prometheus-rules.mjs). The placeholder organisation is refused in what prod deploys.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { formatAs } from './format.mjs';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const OWNERSHIP_FILE = path.join(ROOT, 'ownership.yaml');
export const CODEOWNERS_FILE = path.join(ROOT, 'CODEOWNERS');
export const CATALOG_FILE = path.join(ROOT, 'catalog-info.yaml');
export const ALERTMANAGER_FILE = path.join(ROOT, 'monitoring', 'alertmanager.example.yaml');
/** The organisation of the committed example values: never to reach production. */
export const PLACEHOLDER = 'example-org';

/** @typedef {{ team: string; repository: string }} Ownership */

/**
 * ownership.yaml, checked.
 * @param {string} [file]
 * @returns {Ownership}
 */
export function readOwnership(file = OWNERSHIP_FILE) {
  const { team, repository } = /** @type {Partial<Ownership>} */ (
    parse(readFileSync(file, 'utf8'))
  );
  if (!/^[\w.-]+\/[\w.-]+$/.test(team ?? '')) {
    throw new Error(`${file}: team must be <organisation>/<team>, not ${team}`);
  }
  if (!/^https:\/\/[^/]+\/[\w.-]+\/[\w.-]+$/.test(repository ?? '')) {
    throw new Error(`${file}: repository must be https://<host>/<owner>/<name>, not ${repository}`);
  }
  return { team: /** @type {string} */ (team), repository: /** @type {string} */ (repository) };
}

/**
 * The team's name without its organisation: the Backstage owner group and the `team` label of
 * every alert (prometheus-rules.mjs), which Alertmanager routes on (docs/oncall.md).
 * @param {Ownership} ownership
 */
export const teamName = ({ team }) => team.split('/')[1];

/**
 * Where the repository's files are read on its main branch.
 * @param {Ownership} ownership
 */
export const blobBase = ({ repository }) => `${repository}/blob/main/`;

/**
 * CODEOWNERS with every rule owned by the team; comments and patterns as they are.
 * @param {string} text
 * @param {Ownership} ownership
 */
export function renderCodeowners(text, { team }) {
  return text.replace(/^([^#\s]\S*)\s+.*$/gm, (_line, pattern) => `${pattern} @${team}`);
}

/**
 * catalog-info.yaml with the team as every entity's owner group, and the repository as the
 * project slug and the base of every link; comments and everything else as they are.
 * @param {string} text
 * @param {Ownership} ownership
 */
export async function renderCatalog(text, ownership) {
  const group = `group:${teamName(ownership)}`;
  const slug = new URL(ownership.repository).pathname.slice(1);
  const docs = parseAllDocuments(text).map((doc) => {
    if (doc.hasIn(['spec', 'owner'])) doc.setIn(['spec', 'owner'], group);
    if (doc.hasIn(['metadata', 'annotations', 'github.com/project-slug'])) {
      doc.setIn(['metadata', 'annotations', 'github.com/project-slug'], slug);
    }
    const links = /** @type {{ items: unknown[] } | undefined} */ (
      doc.getIn(['metadata', 'links'])
    );
    links?.items.forEach((_link, i) => {
      const url = String(doc.getIn(['metadata', 'links', i, 'url']));
      const file = url.slice(url.indexOf('/blob/main/') + '/blob/main/'.length);
      doc.setIn(['metadata', 'links', i, 'url'], `${blobBase(ownership)}${file}`);
    });
    return doc.toString({ lineWidth: 0 });
  });
  return formatAs(CATALOG_FILE, docs.join(''));
}

/**
 * The Alertmanager routing example with the team as the value of every `team` matcher; the rest
 * as it is.
 * @param {string} text
 * @param {Ownership} ownership
 */
export function renderAlertmanager(text, ownership) {
  return text.replace(/team="[^"]*"/g, `team="${teamName(ownership)}"`);
}

/**
 * The lines of a rendered manifest that name the placeholder organisation.
 * @param {string} rendered
 * @returns {string[]}
 */
export function placeholderLines(rendered) {
  return rendered
    .split('\n')
    .filter((line) => line.includes(PLACEHOLDER))
    .map((line) => line.trim());
}
