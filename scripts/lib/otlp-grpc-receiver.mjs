// A stand-in OpenTelemetry Collector speaking OTLP/gRPC (OTEL_EXPORTER_OTLP_PROTOCOL=grpc, the
// Collector's port 4317): a @grpc/grpc-js server on a free loopback port implementing
// opentelemetry.proto.collector.trace.v1.TraceService/Export, decoding each request with
// scripts/lib/otlp/trace_service.proto into the same flat spans as the OTLP/HTTP receiver
// (otlp-spans.mjs).
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { flatten, spanReceiver } from './otlp-spans.mjs';

const PROTO_PATH = path.join(import.meta.dirname, 'otlp', 'trace_service.proto');

/**
 * @import { ReceivedSpan, SpanReceiver } from './otlp-spans.mjs'
 * @typedef {SpanReceiver<{ requests: number; metadata: Record<string, string | Buffer> }>}
 *   OtlpGrpcReceiver Export calls received, and the request metadata of the last one.
 */

/**
 * An AnyValue decoded with `oneofs: true` in its OTLP/JSON shape: `{ stringValue: 'x' }`.
 * @param {any} value a decoded protobuf message (proto-loader gives no static types)
 * @returns {object}
 */
function jsonValue(value) {
  if (!value?.value) return {};
  const field = value.value;
  if (field === 'arrayValue')
    return { arrayValue: { values: value.arrayValue.values.map(jsonValue) } };
  if (field === 'kvlistValue')
    return { kvlistValue: { values: jsonAttributes(value.kvlistValue.values) } };
  return { [field]: value[field] };
}

/** @param {{ key: string; value: unknown }[]} list */
const jsonAttributes = (list = []) =>
  list.map(({ key, value }) => ({ key, value: jsonValue(value) }));
/** @param {Uint8Array | undefined} bytes */
const hex = (bytes) => (bytes && bytes.length > 0 ? Buffer.from(bytes).toString('hex') : undefined);

/**
 * The decoded protobuf request in the OTLP/JSON form `flatten` reads (ids as hex).
 * @param {any} request a decoded ExportTraceServiceRequest
 * @returns {any}
 */
function toJsonForm(request) {
  return {
    resourceSpans: /** @type {any[]} */ (request.resourceSpans ?? []).map(
      ({ resource, scopeSpans = [] }) => ({
        resource: { attributes: jsonAttributes(resource?.attributes) },
        scopeSpans: /** @type {any[]} */ (scopeSpans).map(({ scope, spans = [] }) => ({
          scope,
          spans: /** @type {any[]} */ (spans).map((span) => ({
            traceId: hex(span.traceId),
            spanId: hex(span.spanId),
            parentSpanId: hex(span.parentSpanId),
            name: span.name,
            kind: span.kind,
            attributes: jsonAttributes(span.attributes),
          })),
        })),
      }),
    ),
  };
}

/**
 * Starts the receiver on 127.0.0.1 and a free port. `endpoint` is what OTEL_EXPORTER_OTLP_ENDPOINT
 * takes with OTEL_EXPORTER_OTLP_PROTOCOL=grpc; `stats.requests` counts Export calls, with the
 * `metadata` of the last one (the exporter's headers, OTEL_EXPORTER_OTLP_HEADERS).
 * @returns {Promise<OtlpGrpcReceiver>}
 */
export async function startOtlpGrpcReceiver() {
  /** @type {any} */
  const definition = grpc.loadPackageDefinition(
    protoLoader.loadSync(PROTO_PATH, {
      keepCase: false,
      longs: String,
      defaults: false,
      oneofs: true,
    }),
  );
  /** @type {ReceivedSpan[]} */
  const spans = [];
  /** @type {OtlpGrpcReceiver['stats']} */
  const stats = { requests: 0, metadata: {} };
  const server = new grpc.Server();
  server.addService(definition.opentelemetry.proto.collector.trace.v1.TraceService.service, {
    /**
     * @param {grpc.ServerUnaryCall<unknown, object>} call
     * @param {grpc.sendUnaryData<object>} callback
     */
    Export(call, callback) {
      stats.requests += 1;
      stats.metadata = call.metadata.getMap();
      spans.push(...flatten(toJsonForm(call.request)));
      callback(null, {});
    },
  });
  /** @type {number} */
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  /** @type {() => Promise<void>} */
  const close = () =>
    new Promise((resolve) => {
      server.forceShutdown();
      resolve();
    });
  return spanReceiver(port, spans, stats, close);
}
