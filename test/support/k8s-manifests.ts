// The Kubernetes manifests of k8s/, rendered per overlay with their objects picked out by kind,
// and the checks several deployment specs share.
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import {
  type K8sObject,
  listOverlays,
  parseYamlObjects,
  readKustomization,
  renderOverlay,
} from './k8s-render.js';
import { envDefaults, read, root } from './project-files.js';

export const k8sDir = path.join(root, 'k8s');
export const baseDir = path.join(k8sDir, 'base');
export const yamlFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((file) => /\.ya?ml$/.test(file))
    .sort();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ModelClass = new (data: any) => { validate(): void };
export const MODELS: Record<string, ModelClass> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};
/**
 * Custom resources kubernetes-models has no schema for: checked by their own tests
 * (test/deployment/k8s-networking.spec.ts, test/operations/prometheus-rules.spec.ts).
 */
export const STRUCTURAL = [
  'monitoring.coreos.com/v1/ServiceMonitor',
  'monitoring.coreos.com/v1/PrometheusRule',
];

interface ServiceMonitorObject extends K8sObject {
  spec: {
    selector?: { matchLabels?: Record<string, string> };
    endpoints?: { port?: string; path?: string; interval?: string; scrapeTimeout?: string }[];
  };
}

/** The one object of a kind in a render. */
function only<T>(objects: K8sObject[], kind: string, Model: new (data: never) => T): T {
  const found = objects.filter((object) => object.kind === kind);
  expect(found.map((object) => `${kind} ${object.metadata?.name}`)).toHaveLength(1);
  return new Model(found[0] as never);
}

/**
 * The secret example is not rendered (it is not a resource of any kustomization). It holds three
 * Secrets: the service's (the runtime database role), the migration Job's (the migration role)
 * and the on-call's (the operator role).
 */
const secretExamples = parseYamlObjects(
  read('k8s/base/secret.example.yaml'),
  'secret.example.yaml',
).map((object) => new Secret(object));
const secretNamed = (name: string): Secret => {
  const found = secretExamples.filter((example) => example.metadata?.name === name);
  expect(found).toHaveLength(1);
  return found[0];
};
export const secret = secretNamed('users-service');
export const secretData = secret.stringData ?? {};
export const migrationSecret = secretNamed('users-service-migrate');
export const migrationSecretData = migrationSecret.stringData ?? {};
/** The on-call's Secret: the read-only operator role, for the runbooks' psql; no pod reads it. */
export const operatorSecretData = secretNamed('users-service-operator').stringData ?? {};
/** Every Secret of the example, the three above and no other. */
export const secretExampleNames = secretExamples.map((example) => example.metadata?.name);

/** An overlay as kubectl would apply it, with its objects picked out by kind. */
function loadOverlay(overlay: string) {
  const dir = path.join(k8sDir, 'overlays', overlay);
  const { renderer, objects } = renderOverlay(dir);
  const deployment = only(objects, 'Deployment', Deployment);
  const job = only(objects, 'Job', Job);
  const configMap = only(objects, 'ConfigMap', ConfigMap);
  const serviceMonitors = objects.filter((object) => object.kind === 'ServiceMonitor');
  return {
    overlay,
    dir,
    renderer,
    objects,
    kustomization: readKustomization(dir),
    deployment,
    job,
    configMap,
    service: only(objects, 'Service', Service),
    serviceAccount: only(objects, 'ServiceAccount', ServiceAccount),
    networkPolicy: only(objects, 'NetworkPolicy', NetworkPolicy),
    pdb: only(objects, 'PodDisruptionBudget', PodDisruptionBudget),
    hpa: only(objects, 'HorizontalPodAutoscaler', HorizontalPodAutoscaler),
    serviceMonitors: serviceMonitors as ServiceMonitorObject[],
    podSpec: deployment.spec!.template.spec!,
    container: deployment.spec!.template.spec!.containers[0],
    jobPodSpec: job.spec!.template.spec!,
    cmData: configMap.data ?? {},
  };
}
type Overlay = ReturnType<typeof loadOverlay>;

export const overlays = listOverlays(k8sDir).map(loadOverlay);
export const prod = overlays.find((overlay) => overlay.overlay === 'prod')!;

/**
 * A variable as a container sees it: its own env first, then the ConfigMap, then the default in
 * EnvironmentVariables.
 */
export function effectiveNumber(
  manifests: Overlay,
  spec: IContainer,
  name: 'SHUTDOWN_DRAIN_MS' | 'SHUTDOWN_TIMEOUT_MS',
): number {
  const own = spec.env?.find((variable) => variable.name === name)?.value;
  return Number(own ?? manifests.cmData[name] ?? envDefaults[name]);
}

export function containerPort(spec: IContainer, name: string): number | undefined {
  return spec.ports?.find((port) => port.name === name)?.containerPort;
}

export function envNames(spec: IContainer): string[] {
  return (spec.env ?? []).map((variable) => variable.name);
}

export function labelsMatch(selector: Record<string, string> | undefined, labels = {}): boolean {
  const entries = Object.entries(selector ?? {});
  return (
    entries.length > 0 &&
    entries.every(([key, value]) => (labels as Record<string, string>)[key] === value)
  );
}

/** describe.each cases: one per overlay, named after it. */
export const overlayCases = overlays.map((o) => [o.overlay, o] as const);

/** The "restricted" Pod Security Standard, plus a writable /tmp for a read-only root. */
export function expectRestricted(spec: IPodSpec): void {
  expect(spec.hostNetwork ?? false).toBe(false);
  expect(spec.hostPID ?? false).toBe(false);
  expect(spec.hostIPC ?? false).toBe(false);
  const allowedVolumes = [
    'configMap',
    'csi',
    'downwardAPI',
    'emptyDir',
    'ephemeral',
    'persistentVolumeClaim',
    'projected',
    'secret',
  ];
  for (const volume of spec.volumes ?? []) {
    const kinds = Object.keys(volume).filter((key) => key !== 'name');
    expect(kinds.filter((kind) => !allowedVolumes.includes(kind))).toEqual([]);
  }
  const pod = spec.securityContext ?? {};
  // Pod-level settings may not loosen what the containers set.
  expect(pod.runAsNonRoot).not.toBe(false);
  expect(pod.runAsUser).not.toBe(0);
  if (pod.seccompProfile)
    expect(['RuntimeDefault', 'Localhost']).toContain(pod.seccompProfile.type);
  for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
    const sc = c.securityContext ?? {};
    expect([c.name, sc.runAsNonRoot ?? pod.runAsNonRoot]).toEqual([c.name, true]);
    expect(sc.runAsUser ?? pod.runAsUser).toBeGreaterThan(0);
    expect(sc.privileged ?? false).toBe(false);
    expect(sc.allowPrivilegeEscalation).toBe(false);
    expect(sc.capabilities?.drop).toContain('ALL');
    expect((sc.capabilities?.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE')).toEqual([]);
    expect(['RuntimeDefault', 'Localhost']).toContain(
      (sc.seccompProfile ?? pod.seccompProfile)?.type,
    );
    expect(sc.readOnlyRootFilesystem).toBe(true);
    const tmp = c.volumeMounts?.find((mount) => mount.mountPath === '/tmp');
    expect(spec.volumes?.find((volume) => volume.name === tmp?.name)?.emptyDir).toBeDefined();
    expect(c.ports?.some((port) => port.hostPort !== undefined) ?? false).toBe(false);
  }
  expect(spec.automountServiceAccountToken).toBe(false);
}
