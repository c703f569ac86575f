// Who owns the service and how it is kept current: CODEOWNERS, the Backstage catalog entities,
// Renovate's settings and the security policy parse, agree on the owner (set once, in
// ownership.yaml), and point at files and packages that exist; the prod render is refused while
// it names the placeholder organisation.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { PLACEHOLDER_DIGEST } from '../../scripts/lib/image-pin.mjs';
import {
  PLACEHOLDER,
  readOwnership,
  renderAlertmanager,
  renderCatalog,
  renderCodeowners,
} from '../../scripts/lib/ownership.mjs';
import {
  PROMETHEUS_RULE,
  renderPrometheusRule,
  RUNBOOK_BASE_URL,
} from '../../scripts/lib/prometheus-rules.mjs';
import { kubectlAvailable, renderOverlay } from '../support/k8s-render.js';
import { pkg, read, root } from '../support/project-files.js';
import { describeWhenInstalled } from '../support/when-installed.js';

const ownership = readOwnership();
const TEAM = `@${ownership.team}`;
/** Ownership as a real team would set it. */
const REAL = { team: 'acme/users-team', repository: 'https://github.com/acme/users' };

/** A release's image digest. */
const DIGEST = `sha256:${'ab'.repeat(32)}`;

/** `npm run prod:check` on an overlay directory. */
function prodCheck(overlay: string) {
  const { status, stdout, stderr } = spawnSync(
    process.execPath,
    [path.join(root, 'scripts/prod-check.mjs'), overlay],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return { status, output: `${stdout}${stderr}` };
}

interface Entity {
  apiVersion: string;
  kind: string;
  metadata: { name: string; links?: { url: string }[]; annotations?: Record<string, string> };
  spec: {
    type?: string;
    lifecycle?: string;
    owner?: string;
    system?: string;
    providesApis?: string[];
    definition?: { $text?: string };
  };
}

interface PackageRule {
  matchPackageNames?: string[];
  groupName?: string;
}

describe('ownership files', () => {
  it('CODEOWNERS: the owning team for everything, on paths that exist', () => {
    const lines = read('CODEOWNERS')
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('#'));
    expect(lines[0]).toBe(`* ${TEAM}`);
    for (const line of lines) {
      const [pattern, ...owners] = line.split(/\s+/);
      expect([pattern, owners]).toEqual([pattern, [TEAM]]);
      if (pattern !== '*')
        expect([pattern, existsSync(path.join(root, pattern))]).toEqual([pattern, true]);
    }
    // Where the team is set.
    expect(read('CODEOWNERS')).toContain('ownership.yaml');
  });

  it('ownership.yaml sets the team and the repository once: CODEOWNERS, the catalog and every runbook_url are written from it', async () => {
    expect(read('CODEOWNERS')).toBe(renderCodeowners(read('CODEOWNERS'), ownership));
    expect(read('catalog-info.yaml')).toBe(
      await renderCatalog(read('catalog-info.yaml'), ownership),
    );
    expect(read('monitoring/alertmanager.example.yaml')).toBe(
      renderAlertmanager(read('monitoring/alertmanager.example.yaml'), ownership),
    );
    expect(RUNBOOK_BASE_URL).toBe(`${ownership.repository}/blob/main/`);
    // Another owner changes every place, and leaves none behind.
    const codeowners = renderCodeowners(read('CODEOWNERS'), REAL);
    const catalog = await renderCatalog(read('catalog-info.yaml'), REAL);
    const routing = renderAlertmanager(read('monitoring/alertmanager.example.yaml'), REAL);
    expect(routing).toContain('team="users-team"');
    expect(routing).not.toContain(`team="${TEAM.split('/')[1]}"`);
    const rules = await renderPrometheusRule({ team: 'users-team' });
    expect(rules).toContain('team: users-team');
    expect(rules).not.toContain(`team: ${TEAM.split('/')[1]}`);
    for (const text of [codeowners, catalog]) {
      expect(text.includes(PLACEHOLDER)).toBe(false);
      expect(text).toContain('acme/');
    }
    expect(codeowners).toMatch(/^\* @acme\/users-team$/m);
    expect(catalog).toContain('owner: group:users-team');
    expect(catalog).toContain('github.com/project-slug: acme/users');
    expect(() => readOwnership(path.join(root, 'package.json'))).toThrow('team must be');
  });

  it('ownership.yaml says how the team is reached: the acknowledgement time and the escalation, as docs/oncall.md explains them', () => {
    const { oncall } = parse(read('ownership.yaml')) as {
      oncall?: { acknowledge_minutes?: number; escalation?: string[] };
    };
    expect(oncall?.acknowledge_minutes).toBeGreaterThan(0);
    expect(oncall?.acknowledge_minutes).toBeLessThanOrEqual(30);
    expect(oncall?.escalation).toEqual(['team', 'database', 'platform']);
    const doc = read('docs/oncall.md');
    expect(doc).toContain(`${oncall!.acknowledge_minutes} minutes`);
    for (const step of oncall!.escalation!) expect(doc).toContain(`\`${step}\``);
    expect(doc).toContain('ownership.yaml');
  });

  it('catalog-info.yaml: a Component providing the OpenAPI and the proto APIs, one owner, one system', () => {
    const entities = parseAllDocuments(read('catalog-info.yaml')).map((doc) => {
      expect(doc.errors).toEqual([]);
      return doc.toJS() as Entity;
    });
    expect(entities.map((e) => `${e.kind}/${e.metadata.name}`)).toEqual([
      'Component/users-service',
      'System/users',
      'API/users-rest-api',
      'API/users-grpc-api',
    ]);
    const owner = `group:${TEAM.split('/')[1]}`;
    for (const entity of entities) {
      expect(entity.apiVersion).toBe('backstage.io/v1alpha1');
      expect([entity.metadata.name, entity.spec.owner]).toEqual([entity.metadata.name, owner]);
      if (entity.kind !== 'System') expect(entity.spec.system).toBe('users');
      if (entity.kind !== 'System') expect(entity.spec.lifecycle).toBe('production');
    }
    const [component, , rest, grpc] = entities;
    expect(component.spec.type).toBe('service');
    expect(component.spec.providesApis).toEqual([rest.metadata.name, grpc.metadata.name]);
    expect([rest.spec.type, rest.spec.definition?.$text]).toEqual(['openapi', './openapi.json']);
    expect([grpc.spec.type, grpc.spec.definition?.$text]).toEqual(['grpc', './proto/users.proto']);
    expect((JSON.parse(read('openapi.json')) as { openapi: string }).openapi).toMatch(/^3\./);
    expect(read('proto/users.proto')).toMatch(/service Users \{/);
    // The links name this repository's documents, at the same place the runbook URLs do.
    const repository = RUNBOOK_BASE_URL.replace(/^https:\/\/[^/]+\/|\/blob\/main\/$/g, '');
    expect(component.metadata.annotations?.['github.com/project-slug']).toBe(repository);
    for (const { url } of component.metadata.links ?? []) {
      expect(url.startsWith(RUNBOOK_BASE_URL)).toBe(true);
      expect([url, existsSync(path.join(root, url.slice(RUNBOOK_BASE_URL.length)))]).toEqual([
        url,
        true,
      ]);
    }
  });

  it('renovate.json: pinned npm versions, grouped, the Dockerfile base image, lockfile maintenance', () => {
    const renovate = JSON.parse(read('renovate.json')) as {
      rangeStrategy: string;
      lockFileMaintenance: { enabled: boolean };
      packageRules: PackageRule[];
      customManagers: {
        managerFilePatterns: string[];
        matchStrings: string[];
        depNameTemplate: string;
      }[];
    };
    expect(renovate.rangeStrategy).toBe('pin');
    expect(renovate.lockFileMaintenance.enabled).toBe(true);
    const groups = new Map(renovate.packageRules.map((rule) => [rule.groupName, rule]));
    expect(groups.get('NestJS')?.matchPackageNames).toEqual(['@nestjs/**']);
    // Every package a rule names exactly is a dependency (a glob must match at least one).
    const dependencies = Object.keys({
      ...pkg.dependencies,
      ...(pkg as { devDependencies?: object }).devDependencies,
    });
    for (const name of renovate.packageRules.flatMap((rule) => rule.matchPackageNames ?? [])) {
      if (name === 'node') continue;
      const pattern = new RegExp(
        `^${name.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '.*')}$`,
      );
      expect([name, dependencies.some((dependency) => pattern.test(dependency))]).toEqual([
        name,
        true,
      ]);
    }
    // Every version in package.json is exact, as `rangeStrategy: pin` keeps them.
    for (const [name, version] of Object.entries(pkg.dependencies)) {
      expect([name, version]).toEqual([name, expect.stringMatching(/^\d+\.\d+\.\d+(-[\w.]+)?$/)]);
    }
    // The base image's tag and digest, split over two ARGs, are found where the Dockerfile has them.
    const [docker] = renovate.customManagers;
    expect(docker.depNameTemplate).toBe('node');
    expect(new RegExp(docker.managerFilePatterns[0].slice(1, -1)).test('Dockerfile')).toBe(true);
    const found = new RegExp(docker.matchStrings[0]).exec(read('Dockerfile'));
    expect(found?.groups).toEqual({
      currentValue: /^ARG NODE_TAG=(\S+)$/m.exec(read('Dockerfile'))?.[1],
      currentDigest: /^ARG NODE_DIGEST=(\S+)$/m.exec(read('Dockerfile'))?.[1],
    });
  });

  it('SECURITY.md: how to report, the supported versions, the personal data held', () => {
    const security = read('SECURITY.md');
    const headings = [...security.matchAll(/^## (.*)$/gm)].map(([, heading]) => heading);
    expect(headings).toEqual([
      'Reporting a vulnerability',
      'Supported versions',
      'Personal data the service holds',
    ]);
    // Every table of an entity of the service is accounted for.
    const tables = readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.entity.ts'))
      .flatMap((file) =>
        [...read(`src/${file}`).matchAll(/@Entity\('(\w+)'\)/g)].map(([, t]) => t),
      );
    expect(tables.length).toBeGreaterThanOrEqual(4);
    for (const table of tables)
      expect([table, security.includes(`| \`${table}\``)]).toEqual([table, true]);
    expect(security).toContain('IDEMPOTENCY_KEY_TTL_HOURS');
  });
});

describeWhenInstalled(
  'npm run prod:check (kubectl kustomize)',
  kubectlAvailable ? [] : ['kubectl'],
  'install kubectl',
  () => {
    it('npm run prod:check refuses a prod render naming a placeholder (organisation, digest); npm run release:pin sets the image', async () => {
      const committed = prodCheck(path.join(root, 'k8s/overlays/prod'));
      const placeholder = ownership.repository.includes(PLACEHOLDER);
      const unpinned = read('k8s/overlays/prod/kustomization.yaml').includes(PLACEHOLDER_DIGEST);
      expect(committed.status).toBe(placeholder || unpinned ? 1 : 0);
      if (placeholder) expect(committed.output).toContain(`names the placeholder ${PLACEHOLDER}`);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'users-prod-check-'));
      try {
        cpSync(path.join(root, 'k8s'), dir, { recursive: true });
        const rule = path.join(dir, path.relative(path.join(root, 'k8s'), PROMETHEUS_RULE));
        writeFileSync(
          rule,
          await renderPrometheusRule({ runbookBaseUrl: `${REAL.repository}/blob/main/` }),
        );
        // Still refused: the committed digest is the placeholder until a release pins its image.
        expect(prodCheck(path.join(dir, 'overlays/prod'))).toEqual({
          status: 1,
          output: expect.stringContaining(`placeholder digest ${PLACEHOLDER_DIGEST}`),
        });
        const pin = spawnSync(
          process.execPath,
          [
            path.join(root, 'scripts/release-pin.mjs'),
            '--tag',
            '2.3.4',
            '--digest',
            DIGEST,
            '--overlay',
            path.join(dir, 'overlays/prod'),
          ],
          { encoding: 'utf8', timeout: 30_000 },
        );
        expect(pin.status).toBe(0);
        const { objects } = renderOverlay(path.join(dir, 'overlays/prod'));
        const images = objects.flatMap(
          (object) => JSON.stringify(object).match(/"image":"[^"]+"/g) ?? [],
        );
        expect(new Set(images)).toEqual(
          new Set([`"image":"registry.example.com/users-service:2.3.4@${DIGEST}"`]),
        );
        expect(objects.find((object) => object.kind === 'Job')?.metadata?.name).toBe(
          'users-service-migrate-2.3.4',
        );
        expect(prodCheck(path.join(dir, 'overlays/prod'))).toEqual({
          status: 0,
          output: expect.stringContaining('no placeholder'),
        });
        // The check reads the render: one placeholder anywhere in it is refused.
        writeFileSync(
          rule,
          await renderPrometheusRule({
            runbookBaseUrl: `https://github.com/${PLACEHOLDER}/users/blob/main/`,
          }),
        );
        expect(prodCheck(path.join(dir, 'overlays/prod')).status).toBe(1);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  },
);
