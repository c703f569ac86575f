// Tracing settings beyond the defaults, against the built service as a process (the loader hook
// only works when src/telemetry.ts is preloaded with `node --import`): spans exported over OTLP/gRPC
// to an in-process TraceService (the Collector's port 4317), and callers that propagate B3 (single
// and multi header) or Jaeger instead of W3C Trace Context, chosen with OTEL_PROPAGATORS.
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { getUser, usersClient } from '../../scripts/lib/grpc-client.mjs';
import {
  type OtlpGrpcReceiver,
  startOtlpGrpcReceiver,
} from '../../scripts/lib/otlp-grpc-receiver.mjs';
import type { ReceivedSpan } from '../../scripts/lib/otlp-spans.mjs';
import { buildService, type ServiceProcess, startService } from '../support/service-process.js';
import { testDatabaseUrl } from '../support/test-app.js';
import { insertUser, startTracedService } from '../support/traced-service.js';

const SERVER = 2; // OTLP SpanKind
const CLIENT = 3;
const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const isPg = (span: ReceivedSpan) => span.attributes['db.system.name'] === 'postgresql';

describe('tracing over OTLP/gRPC with B3 and Jaeger propagation (e2e)', () => {
  let db: pg.Client;
  let userId: number;
  let receiver: OtlpGrpcReceiver;
  let service: ServiceProcess;

  beforeAll(async () => {
    buildService();
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    receiver = await startOtlpGrpcReceiver();
    service = await startTracedService({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-tenant=users',
      OTEL_PROPAGATORS: 'tracecontext,baggage,b3multi,jaeger',
    });
    userId = await insertUser(db);
  });

  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
    // Leave the shared test database as the other suites expect it: empty, ids from 1.
    await db?.query('TRUNCATE users, posts, idempotency_keys RESTART IDENTITY CASCADE');
    await db?.end();
  });

  /** The SERVER span of this trace named `name`, once the receiver has it. */
  const serverSpan = (traceId: string, name: string) =>
    receiver.waitFor(`the ${name} SERVER span of trace ${traceId}`, (spans) =>
      spans.find((s) => s.traceId === traceId && s.kind === SERVER && s.name === name),
    );

  it('logs at boot that it exports over gRPC, with the propagators it honours', () => {
    expect(service.output()).toContain(
      `tracing on, OTLP grpc to ${receiver.endpoint} (sampler parentbased_always_on, propagators tracecontext,baggage,b3multi,jaeger)`,
    );
  });

  it('exports the HTTP span and its PostgreSQL spans over gRPC, with the configured headers', async () => {
    const traceId = hex(16);
    const parentId = hex(8);
    const response = await fetch(`${service.url}/users/${userId}`, {
      headers: { traceparent: `00-${traceId}-${parentId}-01` },
    });
    expect(response.status).toBe(200);
    const server = await serverSpan(traceId, 'GET /users/:id');
    expect(server.parentSpanId).toBe(parentId);
    expect(server.resource['service.name']).toBe('users-service');
    await receiver.waitFor('a PostgreSQL span below the HTTP span', (spans) =>
      spans.some((s) => isPg(s) && s.parentSpanId === server.spanId),
    );
    expect(receiver.stats.metadata['x-collector-tenant']).toBe('users');
    // The exporter's own Export calls run with tracing suppressed: no span describes them.
    expect(receiver.spans.filter((s) => s.kind === CLIENT && !isPg(s))).toEqual([]);
  });

  it('continues a B3 single-header caller (b3: trace-span-sampled)', async () => {
    const traceId = hex(16);
    const parentId = hex(8);
    const response = await fetch(`${service.url}/users/${userId}`, {
      headers: { b3: `${traceId}-${parentId}-1` },
    });
    expect(response.status).toBe(200);
    const server = await serverSpan(traceId, 'GET /users/:id');
    expect(server.parentSpanId).toBe(parentId);
  });

  it('continues a B3 multi-header caller (X-B3-TraceId, X-B3-SpanId, X-B3-Sampled)', async () => {
    // A 64-bit trace id, as older Zipkin clients send: B3 pads it to 128 bits with zeros.
    const shortTraceId = hex(8);
    const parentId = hex(8);
    const response = await fetch(`${service.url}/users/${userId}`, {
      headers: { 'X-B3-TraceId': shortTraceId, 'X-B3-SpanId': parentId, 'X-B3-Sampled': '1' },
    });
    expect(response.status).toBe(200);
    const server = await serverSpan(`${'0'.repeat(16)}${shortTraceId}`, 'GET /users/:id');
    expect(server.parentSpanId).toBe(parentId);
  });

  it('continues a B3 caller over gRPC metadata too', async () => {
    const traceId = hex(16);
    const parentId = hex(8);
    const client = usersClient(service.grpcAddress);
    try {
      const metadata = new grpc.Metadata();
      metadata.set('x-b3-traceid', traceId);
      metadata.set('x-b3-spanid', parentId);
      metadata.set('x-b3-sampled', '1');
      const result = await getUser(client, userId, { metadata });
      expect(result).toMatchObject({ code: grpc.status.OK, reply: { id: userId } });
    } finally {
      client.close();
    }
    const server = await serverSpan(traceId, 'users.Users/GetUser');
    expect(server.parentSpanId).toBe(parentId);
  });

  it('continues a Jaeger caller (uber-trace-id)', async () => {
    const traceId = hex(16);
    const parentId = hex(8);
    const response = await fetch(`${service.url}/users/${userId}`, {
      headers: { 'uber-trace-id': `${traceId}:${parentId}:0:1` },
    });
    expect(response.status).toBe(200);
    const server = await serverSpan(traceId, 'GET /users/:id');
    expect(server.parentSpanId).toBe(parentId);
  });

  it('does not sample a B3 caller that says not to (X-B3-Sampled: 0)', async () => {
    const unsampled = hex(16);
    const marker = hex(16);
    expect(
      (
        await fetch(`${service.url}/users/${userId}`, {
          headers: { 'X-B3-TraceId': unsampled, 'X-B3-SpanId': hex(8), 'X-B3-Sampled': '0' },
        })
      ).status,
    ).toBe(200);
    // A sampled request sent after it: once its span has arrived, the unsampled one would have too.
    await fetch(`${service.url}/users/${userId}`, { headers: { b3: `${marker}-${hex(8)}-1` } });
    await serverSpan(marker, 'GET /users/:id');
    expect(receiver.spans.some((s) => s.traceId === unsampled)).toBe(false);
  });
});

describe('OTEL_PROPAGATORS at boot (e2e)', () => {
  beforeAll(() => buildService());

  it('stops the service naming the variable when a propagator is not installed', async () => {
    const service = await startService({
      DATABASE_URL: testDatabaseUrl(),
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_PROPAGATORS: 'tracecontext,xray',
    });
    const exit = await service.exited;
    expect(exit.code).not.toBe(0);
    expect(service.output()).toContain(
      'OTEL_PROPAGATORS must be a comma-separated list of tracecontext, baggage, b3, b3multi, jaeger, none',
    );
  });
});
