// What the stand-in OpenTelemetry Collectors (otlp-receiver.mjs over OTLP/HTTP,
// otlp-grpc-receiver.mjs over OTLP/gRPC) share: the flat spans they decode an
// ExportTraceServiceRequest into, the wait for spans to arrive, and the handle they give back.

/**
 * @typedef {object} ReceivedSpan
 * @property {string} traceId
 * @property {string} spanId
 * @property {string} [parentSpanId]
 * @property {string} name
 * @property {number} kind OTLP SpanKind: 1 internal, 2 server, 3 client.
 * @property {string} [scope]
 * @property {Record<string, unknown>} attributes
 * @property {Record<string, unknown>} resource
 * @property {{ traceId: string; spanId: string }[]} links The spans this one links to (OTLP/JSON
 *   only; the gRPC receiver leaves them out).
 */

/**
 * A running receiver; `stats` is what its protocol counts.
 * @template S
 * @typedef {object} SpanReceiver
 * @property {string} endpoint
 * @property {ReceivedSpan[]} spans
 * @property {S} stats
 * @property {<T>(
 *   what: string,
 *   check: (spans: ReceivedSpan[]) => T | undefined | false | null,
 *   timeoutMs?: number,
 * ) => Promise<T>} waitFor Resolves with the first truthy value `check` returns (polled as spans
 *   arrive).
 * @property {() => Promise<void>} close
 */

/**
 * The parts of OTLP/JSON (an ExportTraceServiceRequest) read here.
 * @typedef {{ stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean }} AnyValue
 * @typedef {{ key: string; value?: AnyValue }[]} KeyValues
 * @typedef {{
 *   resourceSpans?: {
 *     resource?: { attributes?: KeyValues };
 *     scopeSpans?: {
 *       scope?: { name?: string };
 *       spans?: (Omit<ReceivedSpan, 'scope' | 'attributes' | 'resource' | 'links'> & {
 *         attributes?: KeyValues;
 *         links?: { traceId: string; spanId: string }[];
 *       })[];
 *     }[];
 *   }[];
 * }} TraceRequest
 */

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An OTLP AnyValue as a plain value (strings, numbers, booleans; arrays and maps as JSON).
 * @param {AnyValue} value
 */
function plain(value = {}) {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  return JSON.stringify(value);
}

/** @param {KeyValues} list */
const attributes = (list = []) => Object.fromEntries(list.map((a) => [a.key, plain(a.value)]));

/**
 * The spans of an ExportTraceServiceRequest in its OTLP/JSON form (ids in hex), each with its
 * resource's attributes.
 * @param {TraceRequest} request
 * @returns {ReceivedSpan[]}
 */
export function flatten(request) {
  const spans = [];
  for (const { resource, scopeSpans = [] } of request.resourceSpans ?? []) {
    const resourceAttributes = attributes(resource?.attributes);
    for (const { scope, spans: list = [] } of scopeSpans) {
      for (const span of list) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          name: span.name,
          kind: span.kind,
          scope: scope?.name,
          attributes: attributes(span.attributes),
          resource: resourceAttributes,
          links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
        });
      }
    }
  }
  return spans;
}

/**
 * `waitFor(what, check, timeoutMs)`: polls until `check(spans)` returns a truthy value.
 * @param {ReceivedSpan[]} spans
 * @returns {SpanReceiver<unknown>['waitFor']}
 */
function spanWaiter(spans) {
  /**
   * @template T
   * @param {string} what
   * @param {(spans: ReceivedSpan[]) => T | undefined | false | null} check
   * @returns {Promise<T>}
   */
  return async (what, check, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = check(spans);
      if (found) return found;
      if (Date.now() > deadline) {
        const names = spans.map((span) => span.name).join(', ') || 'none';
        throw new Error(`timed out waiting for ${what} (spans received: ${names})`);
      }
      await sleep(25);
    }
  };
}

/**
 * The handle of a receiver listening on 127.0.0.1:`port`: `endpoint` is what
 * OTEL_EXPORTER_OTLP_ENDPOINT takes, `spans` fill as requests are decoded, `close` stops it.
 * @template S
 * @param {number} port
 * @param {ReceivedSpan[]} spans
 * @param {S} stats
 * @param {() => Promise<void>} close
 * @returns {SpanReceiver<S>}
 */
export function spanReceiver(port, spans, stats, close) {
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    stats,
    waitFor: spanWaiter(spans),
    close,
  };
}
