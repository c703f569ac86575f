// monitoring/slos.yaml: a Sloth `prometheus/v1` spec with an availability and a latency SLO for
// REST reads, REST writes and gRPC GetUser, whose selectors take in every users and posts
// operation and nothing else the service serves (probes, /metrics, static files, /docs, the
// utility routes), with thresholds the histograms can answer and targets docs/slos.md explains.
import { parse } from 'yaml';
import { SLO_SPEC } from '../../scripts/lib/prometheus-rules.mjs';
import { validateSpec, type SlothSpec } from '../../scripts/lib/slo-rules.mjs';
import { LATENCY_BUCKETS } from '../../src/observability/metrics.service.js';
import { prod } from '../support/k8s-manifests.js';
import { read } from '../support/project-files.js';

const spec = parse(read('monitoring/slos.yaml')) as SlothSpec;
const slo = (name: string) => spec.slos.find((s) => s.name === name)!;
const queries = (name: string) => Object.values(slo(name).sli.events).join('\n');

/** A label matcher of a query: whether it takes in a value, as Prometheus applies it. */
interface Matcher {
  test(value: string): boolean;
}

/** The matchers of a label in a query (`=`, `!=`, `=~`, `!~`), regexes anchored as Prometheus anchors them. */
function matchers(query: string, label: string): Matcher[] {
  return [...query.matchAll(new RegExp(`\\b${label}(=~|!~|!=|=)"([^"]*)"`, 'g'))].map(
    ([, op, value]) => {
      const pattern = op.endsWith('~')
        ? new RegExp(`^(?:${value})$`)
        : new RegExp(`^${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
      const negated = op.startsWith('!');
      return { test: (candidate: string) => pattern.test(candidate) !== negated };
    },
  );
}

/** True when every selector of the SLO's queries takes in this value of the label. */
const selects = (name: string, label: string, value: string) => {
  const found = matchers(queries(name), label);
  return found.length > 0 && found.every((matcher) => matcher.test(value));
};

/** Every HTTP operation the service documents, as the metrics label it: `GET /users/:id`. */
const openapi = JSON.parse(read('openapi.json')) as {
  paths: Record<string, Record<string, unknown>>;
};
const operations = Object.entries(openapi.paths).flatMap(([route, item]) =>
  Object.keys(item)
    .filter((method) => ['get', 'put', 'post', 'delete', 'patch'].includes(method))
    .flatMap((method) => (method === 'get' ? ['GET', 'HEAD'] : [method.toUpperCase()]))
    .map((method) => ({ method, route: route.replace(/\{([^}]+)\}/g, ':$1') })),
);
/**
 * Long polls: `GET /users/changes` with `wait` holds an empty page up to 30 s by design, so its
 * duration is the caller's choice, not the service's speed. Its 5xx count; its time does not.
 */
const LONG_POLLS = ['/users/changes'];
/** Route labels of what is served beside the API: none may count. */
const NOT_API = [
  '(static)',
  '(unmatched)',
  '/docs',
  '/docs-json',
  '/metrics',
  '/health',
  '/health/ready',
];

describe('SLOs (monitoring/slos.yaml)', () => {
  it('is a valid Sloth prometheus/v1 spec: availability and latency of reads, writes and GetUser', () => {
    expect(() => validateSpec(spec)).not.toThrow();
    expect(SLO_SPEC.endsWith('monitoring/slos.yaml')).toBe(true);
    expect(spec.slos.map((s) => s.name)).toEqual([
      'rest-reads-availability',
      'rest-reads-latency',
      'rest-writes-availability',
      'rest-writes-latency',
      'grpc-getuser-availability',
      'grpc-getuser-latency',
    ]);
    for (const { name, objective, alerting } of spec.slos) {
      expect([name, objective >= 99 && objective < 100]).toEqual([name, true]);
      expect(alerting.page_alert?.labels?.severity).toBe('critical');
      expect(alerting.ticket_alert?.labels?.severity).toBe('warning');
    }
  });

  it('refuses what Sloth refuses, naming the problem', () => {
    const broken = (change: (copy: SlothSpec) => void) => {
      const copy = structuredClone(spec);
      change(copy);
      return () => validateSpec(copy);
    };
    expect(broken((c) => (c.version = 'prometheus/v2'))).toThrow('version must be prometheus/v1');
    expect(broken((c) => (c.slos[1].name = c.slos[0].name))).toThrow('named twice');
    expect(broken((c) => (c.slos[0].objective = 100))).toThrow('objective must be between');
    expect(broken((c) => (c.slos[0].sli.events.total_query = 'sum(rate(x[5m]))'))).toThrow(
      'has no {{.window}}',
    );
    expect(broken((c) => (c.slos[0].alerting.name = ''))).toThrow('alerting.name is required');
  });

  it('selects the job the ServiceMonitor scrapes (the Service named users-service)', () => {
    expect(prod.service.metadata?.name).toBe('users-service');
    for (const { name } of spec.slos) {
      expect(selects(name, 'job', 'users-service')).toBe(true);
    }
  });

  it('counts each users and posts operation in reads or in writes, and nothing else served', () => {
    const api = operations.filter(({ route }) => route.startsWith('/users'));
    expect(api.length).toBeGreaterThanOrEqual(10);
    for (const kind of ['availability', 'latency']) {
      const reads = `rest-reads-${kind}`;
      const writes = `rest-writes-${kind}`;
      for (const { method, route } of operations) {
        const inReads = selects(reads, 'method', method) && selects(reads, 'route', route);
        const inWrites = selects(writes, 'method', method) && selects(writes, 'route', route);
        const timed = kind === 'availability' || !LONG_POLLS.includes(route);
        const expected = route.startsWith('/users')
          ? [timed && ['GET', 'HEAD'].includes(method), !['GET', 'HEAD'].includes(method)]
          : [false, false];
        expect([method, route, inReads, inWrites]).toEqual([method, route, ...expected]);
      }
      for (const route of NOT_API) {
        expect([route, selects(reads, 'route', route), selects(writes, 'route', route)]).toEqual([
          route,
          false,
          false,
        ]);
      }
    }
  });

  it('counts 5xx as REST errors, and server-side codes only as gRPC errors', () => {
    for (const name of ['rest-reads-availability', 'rest-writes-availability']) {
      const [errors] = matchers(slo(name).sli.events.error_query, 'status');
      expect(['500', '502', '503', '504'].every((status) => errors.test(status))).toBe(true);
      expect(
        ['200', '201', '204', '304', '400', '404', '409', '412'].some((s) => errors.test(s)),
      ).toBe(false);
    }
    const [codes] = matchers(slo('grpc-getuser-availability').sli.events.error_query, 'grpc_code');
    for (const code of ['UNAVAILABLE', 'INTERNAL', 'UNKNOWN', 'DEADLINE_EXCEEDED', 'DATA_LOSS']) {
      expect([code, codes.test(code)]).toEqual([code, true]);
    }
    for (const code of [
      'OK',
      'NOT_FOUND',
      'INVALID_ARGUMENT',
      'UNAUTHENTICATED',
      'PERMISSION_DENIED',
      'CANCELLED',
    ]) {
      expect([code, codes.test(code)]).toEqual([code, false]);
    }
    // The method the proto declares.
    expect(read('proto/users.proto')).toMatch(
      /package users;[\s\S]*service Users \{[\s\S]*rpc GetUser \(/,
    );
    for (const name of ['grpc-getuser-availability', 'grpc-getuser-latency']) {
      expect(selects(name, 'grpc_service', 'users.Users')).toBe(true);
      expect(selects(name, 'grpc_method', 'GetUser')).toBe(true);
      // A watch streams for as long as its caller listens: its duration is no latency.
      for (const method of ['WatchUserChanges'])
        expect([name, method, selects(name, 'grpc_method', method)]).toEqual([name, method, false]);
    }
  });

  it('partitions every SLI by namespace: one release’s errors are not another’s budget', () => {
    for (const { name, sli } of spec.slos) {
      for (const [key, query] of Object.entries(sli.events)) {
        const sums = [...query.matchAll(/\bsum\b\s*(by \(([^)]*)\))?/g)];
        expect([name, key, sums.length > 0]).toEqual([name, key, true]);
        for (const [, , by] of sums) expect([name, key, by]).toEqual([name, key, 'namespace']);
        // A bare vector(0) has no namespace: it would match no total and leave the ratio empty.
        expect([name, key, query.includes('vector(')]).toEqual([name, key, false]);
      }
    }
  });

  it('sets latency thresholds on bucket boundaries of the duration histograms', () => {
    for (const name of ['rest-reads-latency', 'rest-writes-latency', 'grpc-getuser-latency']) {
      const le = [...queries(name).matchAll(/le="([^"]+)"/g)].map(([, bound]) => Number(bound));
      expect(le).toHaveLength(1);
      expect(LATENCY_BUCKETS).toContain(le[0]);
      expect(slo(name).description).toContain(`${le[0] * 1000} ms`);
    }
  });

  it('has its target and reasons in docs/slos.md', () => {
    const doc = read('docs/slos.md');
    for (const { name, objective } of spec.slos) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${name}\``));
      expect([name, row]).toEqual([name, expect.stringContaining(`${objective}%`)]);
    }
  });
});
