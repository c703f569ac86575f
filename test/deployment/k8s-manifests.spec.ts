// Every rendered overlay of k8s/: objects valid against the Kubernetes schema, labelled, on the
// released image, with a ConfigMap and a Secret the service accepts.
import { validateEnv } from '../../src/config/env.validation.js';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { parseYamlObjects, readKustomization } from '../support/k8s-render.js';
import {
  baseDir,
  migrationSecret,
  migrationSecretData,
  MODELS,
  overlayCases,
  secret,
  secretData,
  operatorSecretData,
  secretExampleNames,
  STRUCTURAL,
} from '../support/k8s-manifests.js';
import { envExample, read } from '../support/project-files.js';

describe.each(overlayCases)('Kubernetes manifests: k8s/overlays/%s', (_name, manifests) => {
  const { objects, kustomization, deployment, job, configMap, container, jobPodSpec, cmData } =
    manifests;

  it.each(objects.map((object) => [`${object.kind} ${object.metadata?.name}`, object] as const))(
    '%s is valid against the Kubernetes schema',
    (_object, object) => {
      const type = `${object.apiVersion}/${object.kind}`;
      expect([...Object.keys(MODELS), ...STRUCTURAL]).toContain(type);
      if (MODELS[type]) expect(() => new MODELS[type](object).validate()).not.toThrow();
    },
  );

  it('labels every resource and pod app.kubernetes.io/name=users-service', () => {
    // One object per listed file (one document each) and one per generated ConfigMap.
    const base = readKustomization(baseDir);
    const local = (kustomization.resources ?? []).filter((r) => !r.startsWith('..'));
    expect(objects.length).toBe(
      (base.resources ?? []).length + (base.configMapGenerator ?? []).length + local.length,
    );
    for (const object of objects) {
      const name = `${object.kind} ${object.metadata?.name}`;
      expect([name, object.metadata?.labels?.['app.kubernetes.io/name']]).toEqual([
        name,
        'users-service',
      ]);
    }
    for (const template of [deployment.spec!.template, job.spec!.template]) {
      expect(template.metadata?.labels?.['app.kubernetes.io/name']).toBe('users-service');
    }
  });

  it('requests as much memory as it limits, in every container of the Deployment and the Job', () => {
    const containers = [container, ...jobPodSpec.containers];
    expect(containers.length).toBeGreaterThanOrEqual(2);
    for (const { name, resources } of containers) {
      expect([name, resources?.limits?.memory]).toEqual([name, expect.stringMatching(/^\d+Mi$/)]);
      expect([name, resources?.requests?.memory]).toEqual([name, resources?.limits?.memory]);
    }
  });

  it('keeps three pods or more whatever the load, one at a time evicted', () => {
    const hpa = objects.find((object) => object.kind === 'HorizontalPodAutoscaler') as
      { spec: { minReplicas: number; maxReplicas: number } } | undefined;
    const pdb = objects.find((object) => object.kind === 'PodDisruptionBudget') as
      { spec: { maxUnavailable: number } } | undefined;
    expect(hpa?.spec.minReplicas).toBeGreaterThanOrEqual(3);
    expect(hpa!.spec.maxReplicas).toBeGreaterThan(hpa!.spec.minReplicas);
    expect(pdb?.spec.maxUnavailable).toBe(1);
  });

  it('sets the image of the Deployment and the migration Job', () => {
    const baseImage = (
      parseYamlObjects(read('k8s/base/deployment.yaml'), 'deployment.yaml')[0] as {
        spec: { template: { spec: IPodSpec } };
      }
    ).spec.template.spec.containers[0].image;
    const images = kustomization.images ?? [];
    expect(images.map((image) => image.name)).toEqual([baseImage]);
    const [{ newName, newTag, digest }] = images;
    expect(newTag).toMatch(/^[a-z0-9][a-z0-9.-]*$/);
    // Production pins the image by digest (the one that was scanned); dev follows the tag.
    if (manifests.overlay === 'prod') expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(container.image).toBe(`${newName ?? baseImage}:${newTag}${digest ? `@${digest}` : ''}`);
    expect(jobPodSpec.containers[0].image).toBe(container.image);
  });

  describe('ConfigMap and Secret', () => {
    it('only hold variables the service reads', () => {
      const names = [cmData, secretData, migrationSecretData].flatMap(Object.keys);
      for (const name of names) {
        expect([name, envExample.has(name)]).toEqual([name, true]);
      }
      expect(Object.keys(secretData).sort()).toEqual([
        'API_KEYS',
        'DATABASE_READ_URLS',
        'DATABASE_URL',
      ]);
      // The migration Job needs its database and nothing else.
      expect(Object.keys(migrationSecretData)).toEqual(['DATABASE_URL']);
      expect(secretExampleNames).toEqual([
        'users-service',
        'users-service-migrate',
        'users-service-operator',
      ]);
      expect(Object.keys(operatorSecretData)).toEqual(['DATABASE_URL']);
      // Secrets never in the ConfigMap.
      for (const data of [secretData, migrationSecretData]) {
        expect(Object.keys(cmData).filter((name) => name in data)).toEqual([]);
      }
      expect(secret.data).toBeUndefined();
      expect(migrationSecret.data).toBeUndefined();
    });

    it('log the service and the migration Job in as different database roles', () => {
      const roles = read('deploy/sql/roles.sql');
      const login = (url: string) => new URL(url);
      const runtime = login(secretData.DATABASE_URL);
      const migration = login(migrationSecretData.DATABASE_URL);
      expect(runtime.username).not.toBe(migration.username);
      // The same database, each role as deploy/sql/roles.sql creates it.
      expect([runtime.host, runtime.pathname]).toEqual([migration.host, migration.pathname]);
      expect(roles).toContain(`CREATE ROLE ${migration.username} LOGIN;`);
      expect(roles).toContain(`CREATE ROLE ${runtime.username} LOGIN;`);
      expect(roles).toMatch(new RegExp(`GRANT users_service_runtime TO ${runtime.username};`));
      expect(roles).toMatch(new RegExp(`OWNER TO ${migration.username};`));
      // People on call log in as the read-only operator role, never as the service.
      const operator = login(operatorSecretData.DATABASE_URL);
      expect([operator.host, operator.pathname]).toEqual([runtime.host, runtime.pathname]);
      expect(roles).toContain(`CREATE ROLE ${operator.username} LOGIN;`);
      expect(roles).toContain(`GRANT pg_monitor TO ${operator.username};`);
      expect(roles).toContain(
        `ALTER ROLE ${operator.username} SET default_transaction_read_only = on;`,
      );
      // And every statement they run is logged under the role's name.
      expect(roles).toContain(`ALTER ROLE ${operator.username} SET log_statement = 'all';`);
      // Replicas are read as the runtime role too.
      for (const replica of secretData.DATABASE_READ_URLS.split(',')) {
        expect(login(replica).username).toBe(runtime.username);
      }
    });

    it('hold values the service accepts: production, a real database, no migration at boot', () => {
      const env = { ...cmData, ...secretData };
      expect(() => validateEnv(env)).not.toThrow();
      expect(() => validateEnv({ ...cmData, ...migrationSecretData })).not.toThrow();
      expect(cmData.NODE_ENV).toBe('production');
      expect(cmData.MIGRATE_ON_BOOT).toBe('false');
      // Production authenticates callers itself unless a mesh is said to (AUTH_MODE=none).
      expect(cmData.AUTH_MODE ?? 'jwt').toBe('jwt');
      expect([cmData.AUTH_JWKS_URL, cmData.AUTH_ISSUER, cmData.AUTH_AUDIENCE]).toEqual([
        expect.stringMatching(/^https:\/\//),
        expect.stringMatching(/^https:\/\//),
        expect.any(String),
      ]);
      expect(Number(cmData.PORT)).toBe(Number(envExample.get('PORT')));
      expect(Number(cmData.GRPC_PORT)).toBe(Number(envExample.get('GRPC_PORT')));
    });

    it('the secret example holds obviously fake values', () => {
      for (const data of [secretData, migrationSecretData]) {
        for (const [name, value] of Object.entries(data)) {
          expect([name, /change-me/i.test(value)]).toEqual([name, true]);
        }
        expect(new URL(data.DATABASE_URL).hostname).toMatch(/\.(invalid|example)$/);
      }
    });

    it('the ConfigMap name carries the hash of its data when kustomize renders it', () => {
      const name = configMap.metadata?.name;
      if (manifests.renderer === 'kubectl kustomize') {
        expect(name).toMatch(/^users-service-config-[a-z0-9]{10}$/);
      } else {
        expect(name).toBe('users-service-config');
      }
    });
  });
});
