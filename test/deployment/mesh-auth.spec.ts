// The mesh authentication examples (k8s/mesh/istio, k8s/mesh/linkerd), checked offline against
// the service they protect: rendered like the overlays (kubectl kustomize where installed), the
// pods, ports, issuer, key set and audience of k8s/, and the scope each handler declares.
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PostsController } from '../../src/posts/posts.controller.js';
import { AUTH_REQUIREMENT, SCOPES } from '../../src/auth/scopes.js';
import { UsersController } from '../../src/users/users.controller.js';
import { parseKustomizeEnv, renderOverlay, type K8sObject } from '../support/k8s-render.js';

const root = path.resolve(import.meta.dirname, '..', '..');
const k8s = path.join(root, 'k8s');
const config = parseKustomizeEnv(readFileSync(path.join(k8s, 'base', 'config.env'), 'utf8'));
const prod = renderOverlay(path.join(k8s, 'overlays', 'prod')).objects;

interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: { ports: { name: string; containerPort: number }[] }[] };
}
const deployment = prod.find((object) => object.kind === 'Deployment') as K8sObject & {
  spec: { template: PodTemplate };
};
const podLabels = deployment.spec.template.metadata.labels;
const containerPorts = deployment.spec.template.spec.containers[0].ports;
const portNumbers = containerPorts.map((port) => String(port.containerPort));
const jobLabels = (
  prod.find((object) => object.kind === 'Job') as K8sObject & { spec: { template: PodTemplate } }
).spec.template.metadata.labels;

const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([key, value]) => labels[key] === value);

/** HTTP method -> scope, from the @RequiredScope of every users and posts handler. */
function scopesByMethod(): Map<string, Set<string>> {
  const byMethod = new Map<string, Set<string>>();
  for (const controller of [UsersController, PostsController]) {
    const prototype = controller.prototype as unknown as Record<string, object>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      if (name === 'constructor') continue;
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, prototype[name]) as number];
      const { scope } = Reflect.getMetadata(AUTH_REQUIREMENT, prototype[name]) as { scope: string };
      byMethod.set(method, (byMethod.get(method) ?? new Set()).add(scope));
    }
  }
  return byMethod;
}

describe('Istio example (k8s/mesh/istio)', () => {
  const objects = renderOverlay(path.join(k8s, 'mesh', 'istio')).objects;
  type Operation = { ports?: string[]; methods?: string[]; paths?: string[] };
  type Rule = {
    from?: { source: { requestPrincipals?: string[] } }[];
    to: { operation: Operation }[];
    when?: { key: string; values: string[] }[];
  };
  const request = objects.find((o) => o.kind === 'RequestAuthentication') as K8sObject & {
    spec: {
      selector: { matchLabels: Record<string, string> };
      jwtRules: { issuer: string; jwksUri: string; audiences: string[] }[];
    };
  };
  const policy = objects.find((o) => o.kind === 'AuthorizationPolicy') as K8sObject & {
    spec: { selector: { matchLabels: Record<string, string> }; action: string; rules: Rule[] };
  };

  it('holds one RequestAuthentication and one AuthorizationPolicy of security.istio.io/v1', () => {
    expect(objects.map((o) => `${o.apiVersion} ${o.kind}`).sort()).toEqual([
      'security.istio.io/v1 AuthorizationPolicy',
      'security.istio.io/v1 RequestAuthentication',
    ]);
  });

  it('selects the service pods, not the migration Job', () => {
    for (const selector of [request.spec.selector, policy.spec.selector]) {
      expect(selects(selector.matchLabels, podLabels)).toBe(true);
      expect(selects(selector.matchLabels, jobLabels)).toBe(false);
    }
  });

  it('trusts the issuer, key set and audience the service is configured with', () => {
    expect(request.spec.jwtRules).toEqual([
      expect.objectContaining({
        issuer: config.AUTH_ISSUER,
        jwksUri: config.AUTH_JWKS_URL,
        audiences: [config.AUTH_AUDIENCE],
      }),
    ]);
    for (const rule of policy.spec.rules.filter((r) => r.from)) {
      expect(rule.from).toEqual([{ source: { requestPrincipals: [`${config.AUTH_ISSUER}/*`] } }]);
    }
  });

  it('names only the container ports', () => {
    expect(policy.spec.action).toBe('ALLOW');
    for (const rule of policy.spec.rules) {
      for (const { operation } of rule.to) {
        for (const port of operation.ports ?? []) expect(portNumbers).toContain(port);
      }
    }
  });

  it('asks of each users and posts method the scope its handler declares', () => {
    const scopeRules = policy.spec.rules.filter((rule) =>
      rule.when?.some((condition) => condition.key === 'request.auth.claims[scope]'),
    );
    expect(scopeRules.flatMap((rule) => rule.when!.flatMap((c) => c.values)).sort()).toEqual(
      [...SCOPES].sort(),
    );
    for (const [method, scopes] of scopesByMethod()) {
      expect(scopes.size).toBe(1);
      const rules = scopeRules.filter((rule) =>
        rule.to.some(
          (to) => to.operation.methods?.includes(method) && to.operation.paths?.includes('/users*'),
        ),
      );
      expect([method, rules.map((rule) => rule.when![0].values)]).toEqual([method, [[...scopes]]]);
    }
    // gRPC GetUser needs users:read, as its handler says.
    const getUser = scopeRules.filter((rule) =>
      rule.to.some((to) => to.operation.paths?.includes('/users.Users/GetUser')),
    );
    expect(getUser.map((rule) => rule.when![0].values)).toEqual([['users:read']]);
  });

  it('leaves open exactly what the service leaves open, and nothing under /users', () => {
    const open = policy.spec.rules.filter((rule) => !rule.from && !rule.when);
    const paths = open.flatMap((rule) => rule.to.flatMap((to) => to.operation.paths ?? []));
    for (const expected of ['/health', '/health/ready', '/docs-json', '/metrics']) {
      expect(paths).toContain(expected);
    }
    expect(paths.filter((p) => p.startsWith('/users') || p === '/echo' || p === '/info')).toEqual(
      [],
    );
    expect(paths.some((p) => p.startsWith('/grpc.health.v1.Health'))).toBe(true);
  });
});

describe('Linkerd example (k8s/mesh/linkerd)', () => {
  const objects = renderOverlay(path.join(k8s, 'mesh', 'linkerd')).objects;
  type Server = K8sObject & {
    spec: {
      podSelector: { matchLabels: Record<string, string> };
      port: string;
      proxyProtocol: string;
    };
  };
  type Policy = K8sObject & {
    spec: {
      targetRef: { kind: string; name: string };
      requiredAuthenticationRefs: { kind: string; name: string }[];
    };
  };
  const servers = objects.filter((o) => o.kind === 'Server') as Server[];
  const policies = objects.filter((o) => o.kind === 'AuthorizationPolicy') as Policy[];
  const authentications = objects.filter(
    (o) => o.kind === 'MeshTLSAuthentication',
  ) as (K8sObject & {
    spec: { identities: string[] };
  })[];

  it('uses the policy.linkerd.io kinds', () => {
    for (const object of objects) {
      expect(`${object.apiVersion} ${object.kind}`).toMatch(
        /^policy\.linkerd\.io\/(v1beta3 Server|v1alpha1 (AuthorizationPolicy|MeshTLSAuthentication))$/,
      );
      expect(object.metadata?.labels?.['app.kubernetes.io/name']).toBe('users-service');
    }
  });

  it('puts a Server on every container port of the service pods, with its protocol', () => {
    expect(servers.map((server) => server.spec.port).sort()).toEqual(
      containerPorts.map((port) => port.name).sort(),
    );
    for (const server of servers) {
      expect(selects(server.spec.podSelector.matchLabels, podLabels)).toBe(true);
      expect(selects(server.spec.podSelector.matchLabels, jobLabels)).toBe(false);
    }
    expect(servers.find((s) => s.spec.port === 'grpc')?.spec.proxyProtocol).toBe('gRPC');
  });

  it('authorizes every Server, each by an authentication that exists', () => {
    for (const server of servers) {
      const policy = policies.filter(
        (p) =>
          p.spec.targetRef.kind === 'Server' && p.spec.targetRef.name === server.metadata?.name,
      );
      expect([server.metadata?.name, policy.length]).toEqual([server.metadata?.name, 1]);
      for (const ref of policy[0].spec.requiredAuthenticationRefs) {
        expect(authentications.map((a) => a.metadata?.name)).toContain(ref.name);
      }
    }
  });

  it('admits only Prometheus to the metrics port, and Prometheus to nothing else', () => {
    const refsOf = (port: string) =>
      policies
        .filter(
          (p) =>
            p.spec.targetRef.name === servers.find((s) => s.spec.port === port)?.metadata?.name,
        )
        .flatMap((p) => p.spec.requiredAuthenticationRefs.map((ref) => ref.name));
    expect(refsOf('metrics')).toEqual(['users-service-prometheus']);
    expect([...refsOf('http'), ...refsOf('grpc')]).not.toContain('users-service-prometheus');
    const prometheus = authentications.find((a) => a.metadata?.name === 'users-service-prometheus');
    expect(prometheus?.spec.identities).toEqual([
      expect.stringMatching(/^prometheus\.monitoring\.serviceaccount\.identity\.linkerd\./),
    ]);
  });
});
