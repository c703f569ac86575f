// The workloads of every rendered overlay: the Deployment (scale, probes, shutdown, sidecars,
// resources), the migration Job, and the restricted security settings of both.
import type { IProbe } from 'kubernetes-models/v1/Probe';
import { parse as parseYaml } from 'yaml';
import { validateEnv } from '../../src/config/env.validation.js';
import {
  containerPort,
  effectiveNumber,
  envNames,
  expectRestricted,
  labelsMatch,
  migrationSecret,
  migrationSecretData,
  overlayCases,
  secret,
} from '../support/k8s-manifests.js';
import {
  defaultGrpcPort,
  defaultMetricsPort,
  defaultPort,
  envExample,
  healthRoute,
  npmRunScript,
  pkg,
  read,
} from '../support/project-files.js';

describe.each(overlayCases)('Kubernetes workloads: k8s/overlays/%s', (_name, manifests) => {
  const {
    kustomization,
    deployment,
    job,
    configMap,
    serviceAccount,
    podSpec,
    container,
    jobPodSpec,
    cmData,
  } = manifests;
  const drain = effectiveNumber(manifests, container, 'SHUTDOWN_DRAIN_MS');
  const timeout = effectiveNumber(manifests, container, 'SHUTDOWN_TIMEOUT_MS');

  describe('Deployment', () => {
    it('leaves the scale to the HPA and rolls out without losing capacity', () => {
      // A replicas field would reset the HPA's scale on every apply.
      expect(deployment.spec?.replicas).toBeUndefined();
      expect(deployment.spec?.strategy?.rollingUpdate?.maxUnavailable).toBe(0);
      expect(
        labelsMatch(
          deployment.spec?.selector.matchLabels,
          deployment.spec?.template.metadata?.labels,
        ),
      ).toBe(true);
      // The migration Job's pods must not count as Deployment (or Service, PDB) pods.
      expect(
        labelsMatch(deployment.spec?.selector.matchLabels, job.spec?.template.metadata?.labels),
      ).toBe(false);
    });

    it('spreads pods over zones and nodes, per ReplicaSet', () => {
      const constraints = podSpec.topologySpreadConstraints ?? [];
      expect(constraints.map((c) => c.topologyKey).sort()).toEqual([
        'kubernetes.io/hostname',
        'topology.kubernetes.io/zone',
      ]);
      for (const constraint of constraints) {
        expect(constraint.matchLabelKeys).toEqual(['pod-template-hash']);
        expect(
          labelsMatch(
            constraint.labelSelector?.matchLabels,
            deployment.spec?.template.metadata?.labels,
          ),
        ).toBe(true);
      }
    });

    it('names the container ports http, grpc and metrics, on the configured ports', () => {
      expect(podSpec.containers).toHaveLength(1);
      expect(containerPort(container, 'http')).toBe(defaultPort);
      expect(containerPort(container, 'grpc')).toBe(defaultGrpcPort);
      expect(containerPort(container, 'metrics')).toBe(defaultMetricsPort);
      expect(containerPort(container, 'metrics')).toBe(Number(cmData.METRICS_PORT));
      expect(containerPort(container, 'http')).toBe(Number(cmData.PORT));
      expect(containerPort(container, 'grpc')).toBe(Number(cmData.GRPC_PORT));
    });

    it("probes the health routes on the metrics port, out of the API port's accept queue", () => {
      const httpGet = (probe: IProbe | undefined) => ({
        path: probe?.httpGet?.path,
        port: probe?.httpGet?.port,
      });
      expect(httpGet(container.startupProbe)).toEqual({
        path: healthRoute('live'),
        port: 'metrics',
      });
      expect(httpGet(container.livenessProbe)).toEqual({
        path: healthRoute('live'),
        port: 'metrics',
      });
      expect(httpGet(container.readinessProbe)).toEqual({
        path: healthRoute('ready'),
        port: 'metrics',
      });
    });

    it('gives boot time to the startup probe and reacts quickly to readiness', () => {
      const budget = (probe: IProbe | undefined) =>
        (probe?.periodSeconds ?? 10) * (probe?.failureThreshold ?? 3) * 1000;
      // Nest listens only after TypeORM connected, retrying DB_RETRY_ATTEMPTS times.
      const retryDelay = Number(
        /retryDelay:\s*([\d_]+)/.exec(read('src/database/database.module.ts'))?.[1],
      );
      expect(retryDelay).toBeGreaterThan(0);
      const connectWorstCase =
        Number(cmData.DB_RETRY_ATTEMPTS) * (Number(cmData.DB_CONNECT_TIMEOUT_MS) + retryDelay);
      expect(budget(container.startupProbe)).toBeGreaterThan(connectWorstCase);
      // Readiness answers within about a second (a bounded SELECT 1).
      expect(container.readinessProbe?.timeoutSeconds ?? 1).toBeGreaterThanOrEqual(2);
      expect(budget(container.readinessProbe)).toBeLessThanOrEqual(drain * 3);
      expect(container.livenessProbe?.failureThreshold ?? 3).toBeGreaterThanOrEqual(3);
    });

    it('reads its environment from the ConfigMap and the Secret', () => {
      const sources = (container.envFrom ?? []).map((from) => ({
        configMap: from.configMapRef?.name,
        secret: from.secretRef?.name,
      }));
      expect(sources).toEqual([
        { configMap: configMap.metadata?.name, secret: undefined },
        { configMap: undefined, secret: secret.metadata?.name },
      ]);
      for (const name of envNames(container))
        expect([name, envExample.has(name)]).toEqual([name, true]);
    });

    it('outlives the drain and the shutdown timeout after SIGTERM', () => {
      expect(drain).toBeGreaterThan(0);
      const grace = (podSpec.terminationGracePeriodSeconds ?? 30) * 1000;
      // Strictly longer, with a margin for Nest's own close and the pool.
      expect(grace).toBeGreaterThanOrEqual(drain + timeout + 5000);
      expect(container.lifecycle?.preStop).toBeUndefined();
    });

    it('keeps a mesh sidecar alive until the service has drained and closed', () => {
      const annotations = deployment.spec?.template.metadata?.annotations ?? {};
      const grace = (podSpec.terminationGracePeriodSeconds ?? 30) * 1000;
      // Linkerd: the proxy exits this long after SIGTERM, within the grace period.
      const linkerdWait =
        Number(annotations['config.alpha.linkerd.io/proxy-wait-before-exit-seconds']) * 1000;
      expect(linkerdWait).toBeGreaterThanOrEqual(drain + timeout);
      expect(linkerdWait).toBeLessThan(grace);
      // Istio: the proxy exits when the service's connections are gone, and starts first.
      const istio = parseYaml(annotations['proxy.istio.io/config'] ?? '') as {
        holdApplicationUntilProxyStarts?: boolean;
        proxyMetadata?: Record<string, string>;
      };
      expect(istio.proxyMetadata?.EXIT_ON_ZERO_ACTIVE_CONNECTIONS).toBe('true');
      expect(istio.holdApplicationUntilProxyStarts).toBe(true);
    });

    it('requests resources (the HPA scales on CPU) and limits memory', () => {
      expect(container.resources?.requests?.cpu).toBeDefined();
      expect(container.resources?.requests?.memory).toBeDefined();
      expect(container.resources?.limits?.memory).toBeDefined();
    });
  });

  it('Deployment pods meet the restricted Pod Security Standard', () => {
    expectRestricted(podSpec);
  });

  it('migration Job pods meet the restricted Pod Security Standard', () => {
    expectRestricted(jobPodSpec);
  });

  it('runs the pods under a ServiceAccount of their own, without an API token', () => {
    expect(serviceAccount.automountServiceAccountToken).toBe(false);
    for (const spec of [podSpec, jobPodSpec]) {
      expect(spec.serviceAccountName).toBe(serviceAccount.metadata?.name);
    }
  });

  describe('migration Job', () => {
    const migrate = jobPodSpec.containers[0];

    it('runs an npm script that exists, once, with the service image and settings', () => {
      const script = npmRunScript(migrate.command ?? migrate.args);
      expect(script).toBe('migration:run');
      expect(pkg.scripts[script!]).toBeDefined();
      expect(jobPodSpec.containers).toHaveLength(1);
      expect(migrate.image).toBe(container.image);
      for (const name of envNames(migrate))
        expect([name, envExample.has(name)]).toEqual([name, true]);
      expect(() =>
        validateEnv({
          ...cmData,
          ...migrationSecretData,
          ...Object.fromEntries((migrate.env ?? []).map((e) => [e.name, e.value])),
        }),
      ).not.toThrow();
    });

    it("logs in as the migration role, from a Secret of its own the service's pods never read", () => {
      const sources = (spec: typeof migrate) =>
        (spec.envFrom ?? []).map((from) => ({
          configMap: from.configMapRef?.name,
          secret: from.secretRef?.name,
        }));
      expect(sources(migrate)).toEqual([
        { configMap: configMap.metadata?.name, secret: undefined },
        { configMap: undefined, secret: migrationSecret.metadata?.name },
      ]);
      expect(migrationSecret.metadata?.name).not.toBe(secret.metadata?.name);
      const readByPods = [...podSpec.containers, ...(podSpec.initContainers ?? [])].flatMap(
        (spec) => [
          ...sources(spec).map((source) => source.secret),
          ...(spec.env ?? []).map((variable) => variable.valueFrom?.secretKeyRef?.name),
        ],
      );
      expect(readByPods).not.toContain(migrationSecret.metadata?.name);
      expect(readByPods).toContain(secret.metadata?.name);
      expect((podSpec.volumes ?? []).map((volume) => volume.secret?.secretName)).not.toContain(
        migrationSecret.metadata?.name,
      );
    });

    it('gets no mesh sidecar, which would keep the Job from completing', () => {
      const annotations = job.spec?.template.metadata?.annotations ?? {};
      expect(annotations['sidecar.istio.io/inject']).toBe('false');
      expect(annotations['linkerd.io/inject']).toBe('disabled');
    });

    it('retries a bounded number of times and cleans up after itself', () => {
      expect(['Never', 'OnFailure']).toContain(jobPodSpec.restartPolicy);
      expect(job.spec?.backoffLimit).toBeGreaterThanOrEqual(1);
      expect(job.spec?.backoffLimit).toBeLessThanOrEqual(6);
      expect(job.spec?.ttlSecondsAfterFinished).toBeGreaterThan(0);
    });

    it('is named per release, after the image tag, so no Job needs deleting by hand', () => {
      const tag = container.image!.split('@')[0].split(':').at(-1);
      if (manifests.renderer === 'kubectl kustomize') {
        expect(job.metadata?.name).toBe(`users-service-migrate-${tag}`);
      } else {
        // Replacements are kustomize's to apply; the plain files only show they are declared.
        expect(job.metadata?.name).toBe('users-service-migrate');
        // Prod first takes the digest off the image (`name:tag@digest`), then reads the tag.
        expect(kustomization.replacements).toHaveLength(manifests.overlay === 'prod' ? 2 : 1);
      }
    });
  });
});
