// The mesh retry examples (k8s/mesh/istio-retries, k8s/mesh/linkerd-retries): a shed answer (503
// with Retry-After, UNAVAILABLE) is never multiplied by the callers' sidecars (docs/overload.md).
import path from 'node:path';
import { renderOverlay, type K8sObject } from '../support/k8s-render.js';

const mesh = path.resolve(import.meta.dirname, '..', '..', 'k8s', 'mesh');
const kindOf = (objects: K8sObject[], kind: string) =>
  objects.find((object) => object.kind === kind) as K8sObject & { spec: Record<string, never> };

describe('Istio retries (k8s/mesh/istio-retries)', () => {
  const objects = renderOverlay(path.join(mesh, 'istio-retries')).objects;

  it('retries only what never reached the service: no 5xx, reset or UNAVAILABLE', () => {
    const virtualService = kindOf(objects, 'VirtualService') as unknown as {
      spec: { hosts: string[]; http: { retries: { attempts: number; retryOn: string } }[] };
    };
    expect(virtualService.spec.hosts).toEqual(['users-service']);
    for (const route of virtualService.spec.http) {
      expect(route.retries.retryOn.split(',').sort()).toEqual([
        'connect-failure',
        'refused-stream',
      ]);
      expect(route.retries.attempts).toBeLessThanOrEqual(2);
    }
  });

  it('caps retries in flight, and ejects a pod only for failures of its own, never half the pods', () => {
    const rule = kindOf(objects, 'DestinationRule') as unknown as {
      spec: {
        host: string;
        trafficPolicy: {
          connectionPool: { http: { maxRetries: number } };
          outlierDetection: Record<string, unknown>;
        };
      };
    };
    expect(rule.spec.host).toBe('users-service');
    expect(rule.spec.trafficPolicy.connectionPool.http.maxRetries).toBeLessThanOrEqual(3);
    expect(rule.spec.trafficPolicy.outlierDetection).toEqual(
      expect.objectContaining({
        splitExternalLocalOriginErrors: true,
        consecutive5xxErrors: 0,
        consecutiveGatewayErrors: 0,
        maxEjectionPercent: 50,
      }),
    );
  });
});

describe('Linkerd retries (k8s/mesh/linkerd-retries)', () => {
  const profile = kindOf(
    renderOverlay(path.join(mesh, 'linkerd-retries')).objects,
    'ServiceProfile',
  ) as unknown as {
    metadata: { name: string };
    spec: {
      retryBudget: { retryRatio: number };
      routes: { condition: Record<string, unknown>; isRetryable: boolean }[];
    };
  };

  it('names the Service by its DNS name and bounds retries with a budget', () => {
    expect(profile.metadata.name).toMatch(/^users-service\.[a-z0-9-]+\.svc\.cluster\.local$/);
    expect(profile.spec.retryBudget.retryRatio).toBeLessThanOrEqual(0.2);
  });

  it('retries reads only, never a write', () => {
    const retryable = profile.spec.routes.filter((route) => route.isRetryable);
    expect(retryable.map((route) => route.condition)).toEqual([{ method: 'GET' }]);
    expect(profile.spec.routes.find((route) => !route.isRetryable)?.condition).toEqual({
      not: { method: 'GET' },
    });
  });
});
