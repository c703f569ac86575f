// Distributed tracing against the built service as a process (the ESM loader hook only works when
// src/telemetry.ts is preloaded with `node --import`, as the container starts it), exporting
// OTLP/JSON to an in-process receiver.
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { getUser, usersClient } from '../../scripts/lib/grpc-client.mjs';
import { startOtlpReceiver } from '../../scripts/lib/otlp-receiver.mjs';
import type { ReceivedSpan } from '../../scripts/lib/otlp-spans.mjs';
import { buildService, type ServiceProcess, waitFor } from '../support/service-process.js';
import { testDatabaseUrl } from '../support/test-app.js';
import { insertUser, startTracedService } from '../support/traced-service.js';

const SERVER = 2; // OTLP SpanKind
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A W3C traceparent of a sampled caller span, with its ids. */
function caller() {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** The JSON lines of the process's output (the rest, such as a stack trace, skipped). */
function logLines(service: ServiceProcess): Record<string, unknown>[] {
  return service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The spans below `root` in its trace (children, grandchildren, ...). */
function descendants(spans: ReceivedSpan[], root: ReceivedSpan): ReceivedSpan[] {
  const found: ReceivedSpan[] = [];
  const parents = new Set([root.spanId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const span of spans) {
      if (span.traceId !== root.traceId || parents.has(span.spanId)) continue;
      if (span.parentSpanId && parents.has(span.parentSpanId)) {
        parents.add(span.spanId);
        found.push(span);
        grew = true;
      }
    }
  }
  return found;
}

const isPg = (span: ReceivedSpan) => span.attributes['db.system.name'] === 'postgresql';

describe('distributed tracing (e2e)', () => {
  let db: pg.Client;
  let userId: number;

  beforeAll(async () => {
    buildService();
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });

  afterAll(async () => {
    // Leave the shared test database as the other suites expect it: empty, ids from 1.
    await db?.query('TRUNCATE users, posts, idempotency_keys RESTART IDENTITY CASCADE');
    await db?.end();
  });

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
    let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
    let service: ServiceProcess;

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      service = await startTracedService({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      });
      userId = await insertUser(db);
    });

    afterAll(async () => {
      await service?.stop();
      await receiver?.close();
    });

    /** The SERVER span of this trace named `name`, once the receiver has it. */
    const serverSpan = (traceId: string, name: string) =>
      receiver.waitFor(`the ${name} SERVER span of trace ${traceId}`, (spans) =>
        spans.find((s) => s.traceId === traceId && s.kind === SERVER && s.name === name),
      );

    it('continues the caller trace over HTTP: GET /users/:id with PostgreSQL spans below it', async () => {
      const parent = caller();
      const response = await fetch(`${service.url}/users/${userId}`, {
        headers: { traceparent: parent.traceparent, 'x-request-id': 'trace-http-1' },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toBe('trace-http-1');

      const server = await serverSpan(parent.traceId, 'GET /users/:id');
      expect(server.parentSpanId).toBe(parent.spanId);
      expect(server.attributes).toMatchObject({
        'http.route': '/users/:id',
        'http.request_id': 'trace-http-1',
      });
      expect(server.resource['service.name']).toBe('users-service');
      const queries = await receiver.waitFor('PostgreSQL spans below the HTTP span', (spans) => {
        const below = descendants(spans, server).filter(isPg);
        return below.length > 0 && below;
      });
      expect(queries.every((span) => span.traceId === parent.traceId)).toBe(true);

      // The request's log line carries the ids of the SERVER span.
      await waitFor('the request log line', () =>
        Promise.resolve(logLines(service).some((line) => line.requestId === 'trace-http-1')),
      );
      const line = logLines(service).find((l) => l.requestId === 'trace-http-1');
      expect(line).toMatchObject({ trace_id: parent.traceId, span_id: server.spanId });
    });

    it('names a request that matches no route of ours by its method alone', async () => {
      const parent = caller();
      const response = await fetch(`${service.url}/no/such/route`, {
        headers: { traceparent: parent.traceparent },
      });
      expect(response.status).toBe(404);
      const server = await serverSpan(parent.traceId, 'GET');
      expect(server.parentSpanId).toBe(parent.spanId);
      expect(server.attributes['http.route']).toBeUndefined();
    });

    it('starts a new trace for a request without traceparent', async () => {
      const response = await fetch(`${service.url}/users/${userId}`, {
        headers: { 'x-request-id': 'trace-http-2' },
      });
      expect(response.status).toBe(200);
      await waitFor('the request log line', () =>
        Promise.resolve(logLines(service).some((line) => line.requestId === 'trace-http-2')),
      );
      const line = logLines(service).find((l) => l.requestId === 'trace-http-2')!;
      expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
      const server = await serverSpan(String(line.trace_id), 'GET /users/:id');
      expect(server.parentSpanId).toBeUndefined();
      expect(server.attributes['http.request_id']).toBe('trace-http-2');
    });

    it('continues the caller trace over gRPC: users.Users/GetUser with PostgreSQL spans below it', async () => {
      const parent = caller();
      const client = usersClient(service.grpcAddress);
      try {
        const metadata = new grpc.Metadata();
        metadata.set('traceparent', parent.traceparent);
        metadata.set('x-request-id', 'trace-grpc-1');
        const result = await getUser(client, userId, { metadata });
        expect(result).toMatchObject({ code: grpc.status.OK, reply: { id: userId, name: 'Ada' } });
      } finally {
        client.close();
      }
      const server = await serverSpan(parent.traceId, 'users.Users/GetUser');
      expect(server.parentSpanId).toBe(parent.spanId);
      expect(server.attributes['rpc.request_id']).toBe('trace-grpc-1');
      await receiver.waitFor('PostgreSQL spans below the gRPC span', (spans) =>
        descendants(spans, server).some(isPg),
      );
      await waitFor('the call log line', () =>
        Promise.resolve(logLines(service).some((line) => line.requestId === 'trace-grpc-1')),
      );
      // Written inside the call (the pino mixin), not given the ids explicitly.
      const line = logLines(service).find((l) => l.requestId === 'trace-grpc-1');
      expect(line).toMatchObject({ trace_id: parent.traceId, span_id: server.spanId });
    });

    it("links a batched GetUser statement's span to every call it served", async () => {
      const parents = Array.from({ length: 20 }, caller);
      const client = usersClient(service.grpcAddress);
      try {
        // Sent together on one connection: they arrive in one turn and share statements.
        const results = await Promise.all(
          parents.map((parent) => {
            const metadata = new grpc.Metadata();
            metadata.set('traceparent', parent.traceparent);
            return getUser(client, userId, { metadata });
          }),
        );
        expect(results.every((result) => result.code === grpc.status.OK)).toBe(true);
      } finally {
        client.close();
      }
      const servers = await Promise.all(
        parents.map((parent) => serverSpan(parent.traceId, 'users.Users/GetUser')),
      );
      // Each call's trace shows the statement it waited on: the statement links to the call's
      // span, and is below it (the call that opened the batch) or in another call's trace.
      const statementOf = (server: ReceivedSpan, spans: ReceivedSpan[]) =>
        spans.find(
          (span) =>
            isPg(span) &&
            span.links.some((link) => link.spanId === server.spanId) &&
            (span.traceId !== server.traceId || descendants(spans, server).includes(span)),
        );
      const statements = await receiver.waitFor('a linked statement for every call', (spans) => {
        const found = servers.map((server) => statementOf(server, spans));
        return found.every(Boolean) && found;
      });
      for (const [i, statement] of statements.entries()) {
        expect(statement!.name).toMatch(/^pg\.query:SELECT/);
        expect(statement!.links).toContainEqual({
          traceId: servers[i].traceId,
          spanId: servers[i].spanId,
        });
      }
    });

    it('logs at boot that tracing is on', () => {
      expect(service.output()).toContain(
        `tracing on, OTLP http/json to ${receiver.endpoint}/v1/traces`,
      );
    });
  });

  describe('without an endpoint', () => {
    let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
    let service: ServiceProcess;

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      // Everything of a traced run but the endpoint: a receiver that must hear nothing.
      service = await startTracedService({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    });

    afterAll(async () => {
      await service?.stop();
      await receiver?.close();
    });

    it('loads no SDK, exports nothing and writes no trace ids', async () => {
      const parent = caller();
      const response = await fetch(`${service.url}/users/${userId}`, {
        headers: { traceparent: parent.traceparent, 'x-request-id': 'untraced-1' },
      });
      expect(response.status).toBe(200);
      await waitFor('the request log line', () =>
        Promise.resolve(logLines(service).some((line) => line.requestId === 'untraced-1')),
      );
      // A traced run exports within OTEL_BSP_SCHEDULE_DELAY; the stop below flushes any rest.
      expect(await service.stop()).toMatchObject({ code: 0 });
      expect(receiver.stats.requests).toBe(0);
      expect(service.output()).toContain('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)');
      expect(service.output()).not.toContain('trace_id');
    });
  });
});
