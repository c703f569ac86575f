// k8s/relay: the change feed relay's own Deployment, one replica (its lock makes a second one
// wait), from the Dockerfile's relay target, probed and scraped on its status port.
import path from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { dockerfile, last } from '../support/dockerfile.js';
import { expectRestricted, k8sDir } from '../support/k8s-manifests.js';
import { renderOverlay } from '../support/k8s-render.js';
import { read } from '../support/project-files.js';

const { objects } = renderOverlay(path.join(k8sDir, 'relay'));
const ofKind = (kind: string) => objects.filter((object) => object.kind === kind);
const deployment = new Deployment(ofKind('Deployment')[0]);
const spec = deployment.spec!.template.spec!;
const container = spec.containers[0];
const env = new Map((container.env ?? []).map((variable) => [variable.name, variable]));

describe('k8s/relay', () => {
  it('renders one valid Deployment, a NetworkPolicy and a PodMonitor', () => {
    expect(objects.map((object) => object.kind).sort()).toEqual([
      'Deployment',
      'NetworkPolicy',
      'PodMonitor',
    ]);
    expect(() => deployment.validate()).not.toThrow();
    expect(() => new NetworkPolicy(ofKind('NetworkPolicy')[0] as never).validate()).not.toThrow();
  });

  it('requests as much memory as it limits', () => {
    expect(container.resources?.limits?.memory).toMatch(/^\d+Mi$/);
    expect(container.resources?.requests?.memory).toBe(container.resources?.limits?.memory);
  });

  it('runs one relay, replaced by stopping the old pod first', () => {
    expect(deployment.spec!.replicas).toBe(1);
    expect(deployment.spec!.strategy?.type).toBe('Recreate');
    expect(container.image).toMatch(/\/users-service-relay:[\w.-]+$/);
    expect(container.command).toBeUndefined();
    expect(dockerfile.some((stage) => stage.name === 'relay')).toBe(true);
  });

  it('takes the lock on PostgreSQL from the service Secret, with settings the relay documents', () => {
    expect(env.get('RELAY_DATABASE_URL')?.valueFrom?.secretKeyRef).toEqual({
      name: 'users-service',
      key: 'DATABASE_URL',
    });
    const documented = read('docs/events.md');
    const relay = read('scripts/relay.mjs');
    for (const name of env.keys()) {
      expect([name, documented.includes(`| \`${name}\``), relay.includes(`env.${name}`)]).toEqual([
        name,
        true,
        true,
      ]);
    }
  });

  it('serves /health and /metrics on the port the image exposes, probed and scraped', () => {
    const relayStage = dockerfile.find((stage) => stage.name === 'relay')!;
    const port = Number(env.get('RELAY_METRICS_PORT')?.value);
    expect(String(port)).toBe(last(relayStage, 'EXPOSE'));
    expect(container.ports).toEqual([{ name: 'metrics', containerPort: port, protocol: 'TCP' }]);
    expect(container.livenessProbe?.httpGet).toEqual({ path: '/health', port: 'metrics' });
    const monitor = ofKind('PodMonitor')[0] as {
      spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: object[] };
    };
    expect(monitor.spec.podMetricsEndpoints).toEqual([
      expect.objectContaining({ port: 'metrics', path: '/metrics' }),
    ]);
    expect(monitor.spec.selector.matchLabels).toEqual(
      deployment.spec!.selector.matchLabels as Record<string, string>,
    );
  });

  it('meets the restricted Pod Security Standard and reaches only the service, PostgreSQL and NATS', () => {
    expectRestricted(spec);
    const policy = new NetworkPolicy(ofKind('NetworkPolicy')[0]);
    const egress = (policy.spec!.egress ?? []).flatMap((rule) =>
      (rule.ports ?? []).map((port) => port.port),
    );
    expect(new Set(egress)).toEqual(new Set([5000, 5432, 4222, 53]));
  });
});
