import { context, isSpanContextValid, type Span, trace } from '@opentelemetry/api';
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { TextMapPropagator } from '@opentelemetry/api';
import type { EnvironmentVariables, PROPAGATORS } from '../config/env.validation.js';
import { callsServed } from '../database/batched-lookup.js';
import { routeOf } from './route.js';

/** What src/telemetry.ts decided from the OTEL_* variables. */
export interface TracingSettings {
  enabled: boolean;
  /** For the boot log line: where spans go, or why nothing is traced. */
  description: string;
  serviceName: string;
  protocol: EnvironmentVariables['OTEL_EXPORTER_OTLP_PROTOCOL'];
  /** OTEL_PROPAGATORS, in order, without repeats; empty for `none`. */
  propagators: Exclude<Propagator, 'none'>[];
}

type Propagator = (typeof PROPAGATORS)[number];

/**
 * On when an OTLP endpoint is set and OTEL_SDK_DISABLED is not true (the specification's rule).
 * The exporter reads the endpoint, headers, timeout, compression and certificates from the
 * environment itself; the protocol picks the exporter, so it is decided here.
 */
export function tracingSettings(env: EnvironmentVariables): TracingSettings {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  // OTLP/HTTP appends the signal's path to the base endpoint; gRPC uses it as it is (host:port).
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const endpoint =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (base && (protocol === 'grpc' ? base : `${base}/v1/traces`));
  // Validated at boot: every item is one of PROPAGATORS.
  const names = env.OTEL_PROPAGATORS.split(',').map((name) => name.trim()) as Propagator[];
  // `none` alone means no propagation; listed with others it adds nothing.
  const propagators = [...new Set(names)].filter((name) => name !== 'none');
  const common = { serviceName: env.OTEL_SERVICE_NAME, protocol, propagators };
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true')
    return { ...common, enabled: false, description: 'off (OTEL_SDK_DISABLED=true)' };
  if (!endpoint)
    return { ...common, enabled: false, description: 'off (no OTEL_EXPORTER_OTLP_ENDPOINT)' };
  return {
    ...common,
    enabled: true,
    description: `on, OTLP ${protocol} to ${endpoint} (sampler ${env.OTEL_TRACES_SAMPLER}, propagators ${propagators.join(',') || 'none'})`,
  };
}

// The probes and the scrape: a trace every few seconds per pod that nobody wants to read.
const UNTRACED_PATHS = new Set(['/health', '/health/ready', '/metrics']);

let provider: { shutdown(): Promise<void> } | undefined;
let status = 'off (src/telemetry.ts was not loaded: node --import ./dist/src/telemetry.js)';

/** True once the SDK runs: the per-request hooks and the log mixin check this first. */
export function tracingEnabled(): boolean {
  return provider !== undefined;
}

/** One phrase for the boot log: on and where to, or off and why. */
export function tracingStatus(): string {
  return status;
}

/**
 * Starts the OpenTelemetry SDK: loaded with import() only here, so a service without an
 * endpoint never loads it. Must run before anything imports http, express, pg or @grpc/grpc-js
 * (src/telemetry.ts, through `node --import`): instrumentation patches modules as they load.
 */
export async function startTracing(settings: TracingSettings): Promise<void> {
  status = settings.description;
  if (!settings.enabled || provider) return;
  // ESM: the loader hook must be registered before the instrumented modules are imported. The
  // message channel limits it to the modules the instrumentations name; everything else loads
  // untouched (CommonJS requires are patched by require-in-the-middle).
  const { register } = await import('node:module');
  const { createAddHookMessageChannel } = await import('import-in-the-middle');
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const [sdk, resources, instrumentation, http, pg, grpc, otlp, propagator] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-grpc'),
    EXPORTERS[settings.protocol](),
    createPropagator(settings.propagators),
  ]);
  const tracerProvider = new sdk.NodeTracerProvider({
    // OTEL_RESOURCE_ATTRIBUTES, then our service name (OTEL_SERVICE_NAME or its default).
    resource: resources
      .defaultResource()
      .merge(resources.detectResources({ detectors: [resources.envDetector] }))
      .merge(resources.resourceFromAttributes({ 'service.name': settings.serviceName })),
    // Sampler: OTEL_TRACES_SAMPLER(_ARG); batching: OTEL_BSP_*; both read by the SDK.
    spanProcessors: [new sdk.BatchSpanProcessor(new otlp.OTLPTraceExporter())],
  });
  tracerProvider.register({ propagator });
  instrumentation.registerInstrumentations({
    tracerProvider,
    instrumentations: [
      new http.HttpInstrumentation({
        ignoreIncomingRequestHook: (request) =>
          UNTRACED_PATHS.has((request.url ?? '').split('?')[0]),
        // The service calls no HTTP APIs; the exporter's own requests are never traced.
        disableOutgoingRequestInstrumentation: true,
        applyCustomAttributesOnSpan: nameServerSpan,
      }),
      // Queries outside a request (pool start, the idempotency purge) start no trace of their own.
      // A batched statement's span also links to every call it answers (BatchedLookup).
      new pg.PgInstrumentation({ requireParentSpan: true, requestHook: linkCallsServed }),
      new grpc.GrpcInstrumentation(),
    ],
  });
  await waitForAllMessagesAcknowledged();
  provider = tracerProvider;
}

/**
 * The exporter module of each OTLP protocol. The gRPC exporter's own calls are not traced: the
 * batch span processor exports with tracing suppressed, so the gRPC instrumentation skips them.
 */
const EXPORTERS = {
  grpc: () => import('@opentelemetry/exporter-trace-otlp-grpc'),
  'http/protobuf': () => import('@opentelemetry/exporter-trace-otlp-proto'),
  'http/json': () => import('@opentelemetry/exporter-trace-otlp-http'),
} as const satisfies Record<TracingSettings['protocol'], () => Promise<unknown>>;

/**
 * The propagators OTEL_PROPAGATORS names, composed in its order (extraction: the last one that
 * finds a context wins; injection: all of them). B3 extraction reads both the single `b3` header
 * and the multi-header `X-B3-*` form; the two names differ only in what they inject.
 */
export async function createPropagator(
  names: TracingSettings['propagators'],
): Promise<TextMapPropagator> {
  const [core, b3, jaeger] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/propagator-b3'),
    import('@opentelemetry/propagator-jaeger'),
  ]);
  const create = {
    tracecontext: () => new core.W3CTraceContextPropagator(),
    baggage: () => new core.W3CBaggagePropagator(),
    b3: () => new b3.B3Propagator({ injectEncoding: b3.B3InjectEncoding.SINGLE_HEADER }),
    b3multi: () => new b3.B3Propagator({ injectEncoding: b3.B3InjectEncoding.MULTI_HEADER }),
    jaeger: () => new jaeger.JaegerPropagator(),
  };
  return new core.CompositePropagator({ propagators: names.map((name) => create[name]()) });
}

/**
 * Names the SERVER span by route template (`GET /users/:id`), as the logs and metrics label it,
 * just before it ends. instrumentation-express would name matched routes the same way but wraps
 * every middleware layer, and names an unmatched request `GET ` (Nest's catch-all route);
 * without a route of ours the name is the method alone, as the semantic conventions say.
 */
function nameServerSpan(
  span: Span,
  request: ClientRequest | IncomingMessage,
  response: IncomingMessage | ServerResponse,
): void {
  // Outgoing requests are not instrumented: only a server's pair arrives here.
  if (!('httpVersion' in request) || !('headersSent' in response)) return;
  const route = routeOf(request, response.statusCode);
  if (!route.startsWith('/')) {
    span.updateName(request.method ?? 'HTTP');
    return;
  }
  span.updateName(`${request.method} ${route}`).setAttribute('http.route', route);
}

function linkCallsServed(span: Span): void {
  const links = callsServed(context.active());
  if (links) span.addLinks(links);
}

/** Flushes the spans still buffered and stops the SDK (at shutdown; a no-op when off). */
export async function shutdownTracing(): Promise<void> {
  const stopping = provider;
  provider = undefined;
  await stopping?.shutdown();
}

/** The span of the request running now, when tracing is on. */
export function activeSpan(): Span | undefined {
  return provider ? trace.getSpan(context.active()) : undefined;
}

/**
 * `trace_id` and `span_id` of a span, for a log line (none for an invalid context). A new object
 * each time: pino's mixin merges the line's own fields into it.
 */
export function traceFields(span: Span | undefined): { trace_id?: string; span_id?: string } {
  const spanContext = span?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
