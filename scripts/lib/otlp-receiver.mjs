// A stand-in OpenTelemetry Collector for the tests and the benchmark: a node:http server on a
// free loopback port accepting OTLP/HTTP POST /v1/traces. JSON requests (OTEL_EXPORTER_OTLP_PROTOCOL
// =http/json) are decoded into flat spans to assert on; protobuf requests are only counted, so the
// benchmark can use it as a sink that costs the service what a real collector would.
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';

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
 * @typedef {object} OtlpReceiver
 * @property {string} endpoint
 * @property {ReceivedSpan[]} spans
 * @property {{ requests: number; bytes: number }} stats
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
 * @returns {OtlpReceiver['waitFor']}
 */
export function spanWaiter(spans) {
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
 * Starts the receiver on 127.0.0.1 and a free port. `endpoint` is what OTEL_EXPORTER_OTLP_ENDPOINT
 * takes; `requests` counts every POST (any protocol); `spans` holds the decoded JSON spans.
 * @returns {Promise<OtlpReceiver>}
 */
export async function startOtlpReceiver() {
  /** @type {ReceivedSpan[]} */
  const spans = [];
  const stats = { requests: 0, bytes: 0 };
  const server = createServer((request, response) => {
    /** @type {Buffer[]} */
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      stats.requests += 1;
      let body = Buffer.concat(chunks);
      stats.bytes += body.length;
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      try {
        if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        if ((request.headers['content-type'] ?? '').startsWith('application/json')) {
          spans.push(...flatten(JSON.parse(body.toString('utf8'))));
        }
      } catch {
        response.writeHead(400).end();
        return;
      }
      response.writeHead(200, {
        'content-type': request.headers['content-type'] ?? 'application/json',
      });
      response.end(request.headers['content-type']?.startsWith('application/json') ? '{}' : '');
    });
  });
  await /** @type {Promise<void>} */ (
    new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  );
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    stats,
    waitFor: spanWaiter(spans),
    close: () =>
      /** @type {Promise<void>} */ (
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        })
      ),
  };
}
