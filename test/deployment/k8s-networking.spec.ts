// Traffic and scale in every rendered overlay: the Service, the NetworkPolicy, the disruption
// budget and autoscaler, and the Prometheus ServiceMonitor.
import { parse as parseYaml } from 'yaml';
import { containerPort, labelsMatch, overlayCases, secretData } from '../support/k8s-manifests.js';
import {
  CLIENT_NAMESPACE_LABEL,
  defaultGrpcPort,
  defaultMetricsPort,
  read,
} from '../support/project-files.js';

describe.each(overlayCases)(
  'Kubernetes traffic and scaling: k8s/overlays/%s',
  (_name, manifests) => {
    const { deployment, job, service, networkPolicy, pdb, hpa, container, cmData } = manifests;

    describe('Service', () => {
      it('is a ClusterIP selecting the Deployment pods only', () => {
        expect(service.spec?.type ?? 'ClusterIP').toBe('ClusterIP');
        expect(
          labelsMatch(service.spec?.selector, deployment.spec?.template.metadata?.labels),
        ).toBe(true);
        expect(labelsMatch(service.spec?.selector, job.spec?.template.metadata?.labels)).toBe(
          false,
        );
      });

      it('exposes http on 80, grpc on 5000 and metrics on METRICS_PORT to the named container ports', () => {
        const ports = (service.spec?.ports ?? []).map((port) => ({
          name: port.name,
          port: port.port,
          targetPort: port.targetPort,
          appProtocol: port.appProtocol,
        }));
        expect(ports).toEqual([
          { name: 'http', port: 80, targetPort: 'http', appProtocol: 'http' },
          { name: 'grpc', port: defaultGrpcPort, targetPort: 'grpc', appProtocol: 'grpc' },
          { name: 'metrics', port: defaultMetricsPort, targetPort: 'metrics', appProtocol: 'http' },
        ]);
        for (const { targetPort } of ports) {
          expect(containerPort(container, String(targetPort))).toBeDefined();
        }
      });
    });

    describe('NetworkPolicy', () => {
      const spec = networkPolicy.spec!;
      const ports = (rules: { ports?: { port?: number | string }[] }[] | undefined) =>
        (rules ?? []).flatMap((rule) => (rule.ports ?? []).map((p) => Number(p.port)));

      it('covers the service and the migration Job, both directions', () => {
        expect(spec.policyTypes?.sort()).toEqual(['Egress', 'Ingress']);
        for (const template of [deployment.spec!.template, job.spec!.template]) {
          expect(labelsMatch(spec.podSelector?.matchLabels, template.metadata?.labels)).toBe(true);
        }
      });

      it('admits only the HTTP, gRPC and metrics ports', () => {
        for (const rule of spec.ingress ?? []) expect(rule.ports?.length).toBeGreaterThan(0);
        expect([...new Set(ports(spec.ingress))].sort()).toEqual(
          [
            containerPort(container, 'http'),
            containerPort(container, 'grpc'),
            containerPort(container, 'metrics'),
          ].sort(),
        );
      });

      it('admits the API ports only from namespaces labelled as clients, metrics only from monitoring', () => {
        const api = [containerPort(container, 'http'), containerPort(container, 'grpc')];
        const metricsPort = containerPort(container, 'metrics');
        for (const rule of spec.ingress ?? []) {
          const rulePorts = ports([rule]);
          expect(rule.from?.length).toBeGreaterThan(0);
          for (const peer of rule.from ?? []) {
            expect(peer.ipBlock).toBeUndefined();
            const labels = peer.namespaceSelector?.matchLabels ?? {};
            if (rulePorts.some((port) => api.includes(port))) {
              // No rule opens the API ports to every namespace.
              expect(labels[CLIENT_NAMESPACE_LABEL]).toBe('true');
              expect(rulePorts).not.toContain(metricsPort);
            } else {
              expect(rulePorts).toEqual([metricsPort]);
              expect(labels['kubernetes.io/metadata.name']).toBe('monitoring');
            }
          }
        }
      });

      it('lets out only PostgreSQL, DNS and HTTPS (the key set), and the mesh control plane and collector by namespace', () => {
        for (const rule of spec.egress ?? []) expect(rule.ports?.length).toBeGreaterThan(0);
        const anywhere = (spec.egress ?? []).filter((rule) => rule.to === undefined);
        expect([...new Set(ports(anywhere))].sort((a, b) => a - b)).toEqual([53, 443, 5432]);
        expect(new URL(cmData.AUTH_JWKS_URL).protocol).toBe('https:');
        expect(Number(new URL(cmData.AUTH_JWKS_URL).port || 443)).toBe(443);
        expect(ports(anywhere)).toContain(Number(new URL(secretData.DATABASE_URL).port));
        for (const rule of (spec.egress ?? []).filter((r) => r.to !== undefined)) {
          for (const peer of rule.to!) {
            expect(peer.ipBlock).toBeUndefined();
            expect(peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']).toMatch(
              /^(istio-system|linkerd|observability)$/,
            );
          }
        }
        const collector = (spec.egress ?? []).filter((rule) =>
          rule.to?.some(
            (peer) =>
              peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] ===
              'observability',
          ),
        );
        expect(ports(collector)).toEqual([4317, 4318]);
      });
    });

    describe('PodDisruptionBudget and HorizontalPodAutoscaler', () => {
      it('evicts one pod at a time without blocking node drains on unhealthy pods', () => {
        expect(pdb.spec?.minAvailable).toBeUndefined();
        expect(pdb.spec?.maxUnavailable).toBe(1);
        expect(pdb.spec?.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
        expect(pdb.spec?.selector?.matchLabels).toEqual(deployment.spec?.selector.matchLabels);
        // At least one pod keeps serving while another is evicted.
        expect(Number(pdb.spec?.maxUnavailable)).toBeLessThan(hpa.spec.minReplicas!);
        // At the smallest scale, an eviction leaves two pods: one more failing still leaves one.
        expect(hpa.spec.minReplicas! - Number(pdb.spec?.maxUnavailable)).toBeGreaterThanOrEqual(2);
      });

      it('scales the Deployment on CPU between 3 (one a zone) and N replicas', () => {
        expect(hpa.spec?.scaleTargetRef).toEqual({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: deployment.metadata?.name,
        });
        expect(hpa.spec?.minReplicas).toBeGreaterThanOrEqual(3);
        expect(hpa.spec?.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas!);
        const cpu = hpa.spec?.metrics?.find(
          (m) => m.type === 'Resource' && m.resource?.name === 'cpu',
        );
        expect(cpu?.resource?.target.type).toBe('Utilization');
        expect(cpu?.resource?.target.averageUtilization).toBeGreaterThan(0);
      });

      it('stays within PostgreSQL connections at full scale during a rollout, with the relay and operators', () => {
        // max_connections defaults to 100, with 3 reserved for superusers; the Job uses one, the
        // relay one for its lock per replica (recreated, never two at once), and the people on
        // call at most their role's connection limit.
        const surge = Number(deployment.spec?.strategy?.rollingUpdate?.maxSurge ?? 1);
        const pods = hpa.spec.maxReplicas + surge;
        const relay = parseYaml(read('k8s/relay/deployment.yaml')) as {
          spec: { replicas: number; strategy: { type: string } };
        };
        expect(relay.spec.strategy.type).toBe('Recreate');
        const operators = Number(
          /ALTER ROLE users_service_operator CONNECTION LIMIT (\d+);/.exec(
            read('deploy/sql/roles.sql'),
          )?.[1],
        );
        expect(operators).toBeGreaterThan(0);
        expect(
          pods * Number(cmData.DB_POOL_SIZE) + 1 + relay.spec.replicas + operators,
        ).toBeLessThanOrEqual(97);
      });
    });

    describe('ServiceMonitor', () => {
      const required = manifests.overlay === 'prod';

      it(`is ${required ? 'present' : 'optional'} in this overlay`, () => {
        expect(manifests.serviceMonitors.length).toBe(required ? 1 : 0);
      });

      // Declared only where there is one: the dev overlay has none.
      if (manifests.serviceMonitors.length > 0) {
        it('scrapes /metrics on the Service metrics port, never the API port', () => {
          for (const monitor of manifests.serviceMonitors) {
            expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
            expect(labelsMatch(monitor.spec.selector?.matchLabels, service.metadata?.labels)).toBe(
              true,
            );
            const servicePorts = (service.spec?.ports ?? []).map((port) => port.name);
            expect(monitor.spec.endpoints?.length).toBeGreaterThan(0);
            for (const endpoint of monitor.spec.endpoints ?? []) {
              expect(endpoint.port).toBe('metrics');
              expect(servicePorts).toContain(endpoint.port);
              expect(endpoint.path).toBe('/metrics');
              expect(endpoint.interval).toMatch(/^\d+[smh]$/);
            }
            // The NetworkPolicy lets the scrape in.
            const ingressPorts = (networkPolicy.spec?.ingress ?? []).flatMap((rule) =>
              (rule.ports ?? []).map((p) => Number(p.port)),
            );
            expect(ingressPorts).toContain(containerPort(container, 'metrics'));
          }
        });
      }
    });
  },
);
