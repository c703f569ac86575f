export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  scope?: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  endpoint: string;
  spans: ReceivedSpan[];
  stats: { requests: number; bytes: number };
  /** Resolves with the first truthy value `check` returns (polled as spans arrive). */
  waitFor<T>(
    what: string,
    check: (spans: ReceivedSpan[]) => T | undefined | false | null,
    timeoutMs?: number,
  ): Promise<T>;
  close(): Promise<void>;
}

export function startOtlpReceiver(): Promise<OtlpReceiver>;

/** The spans of an ExportTraceServiceRequest in its OTLP/JSON form. */
export function flatten(request: unknown): ReceivedSpan[];

export function spanWaiter(spans: ReceivedSpan[]): OtlpReceiver['waitFor'];
