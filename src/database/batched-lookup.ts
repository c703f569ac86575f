import { type Context, context, createContextKey, type Link, trace } from '@opentelemetry/api';

/** The most keys one statement looks up; a larger batch is split. */
export const MAX_BATCH_KEYS = 500;

interface Waiting<Row> {
  resolve(row: Row | undefined): void;
  reject(error: unknown): void;
  /** The span of the call that waits, when it is traced. */
  link?: Link;
}

const CALLS_SERVED = createContextKey('the spans of the calls a batched statement serves');

/**
 * Links to the spans of the calls that the statement run in `active` answers, when it is a
 * batch's: the tracer links its query span to them (src/observability/tracing.ts).
 */
export function callsServed(active: Context): Link[] | undefined {
  return active.getValue(CALLS_SERVED) as Link[] | undefined;
}

/**
 * Lookups by key that arrive in the same turn of the event loop, answered by one statement for
 * all their keys (`WHERE id = ANY($1)`) sent at the end of that turn, as DataLoader does. A gRPC
 * client with 50 calls in flight sends them in bursts: one statement and one round trip per
 * burst instead of one per call, which is most of a call's cost (bench/README.md, "gRPC against
 * its floor").
 *
 * Each lookup still reads inside its own call: the statement starts after every lookup of the
 * batch began and answers before any of them ends, so a lookup sees every write acknowledged
 * before it began, as a statement of its own would. A lookup alone in its turn waits for nothing
 * but the end of that turn. When the statement fails, every lookup of the batch fails with its
 * error (a timeout, the database unreachable), as each would have alone, and so does an answer
 * that cannot be read (no list of rows, a row without a key).
 *
 * The statement runs in the context of the call that opened the batch, so its query span is a
 * child of that call's; it also carries links to the span of every call it serves
 * (docs/tracing.md).
 */
export class BatchedLookup<Key, Row> {
  private batch = new Map<Key, Waiting<Row>[]>();
  private scheduled = false;

  /**
   * @param lookup the rows of these keys (distinct), in any order; a key without a row has none
   * @param keyOf the key of a row `lookup` returned
   */
  constructor(
    private readonly lookup: (keys: Key[]) => Promise<Row[]>,
    private readonly keyOf: (row: Row) => Key,
    private readonly maxKeys = MAX_BATCH_KEYS,
  ) {}

  /** The row of `key`, or undefined when there is none. */
  find(key: Key): Promise<Row | undefined> {
    const span = trace.getActiveSpan();
    const link = span && { context: span.spanContext() };
    return new Promise((resolve, reject) => {
      const waiting = this.batch.get(key);
      if (waiting) waiting.push({ resolve, reject, link });
      else this.batch.set(key, [{ resolve, reject, link }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.send());
      }
    });
  }

  private send(): void {
    const batch = this.batch;
    this.batch = new Map();
    this.scheduled = false;
    const keys = [...batch.keys()];
    for (let start = 0; start < keys.length; start += this.maxKeys) {
      const slice = keys.slice(start, start + this.maxKeys);
      const waiting = slice.flatMap((key) => batch.get(key)!);
      const links = waiting.flatMap((one) => (one.link ? [one.link] : []));
      const active = context.active();
      const statementContext = links.length ? active.setValue(CALLS_SERVED, links) : active;
      // A lookup that throws instead of rejecting fails its batch, not the process; so does an
      // answer that cannot be read, rather than leaving its waiters hanging.
      context
        .with(statementContext, () => new Promise<Row[]>((resolve) => resolve(this.lookup(slice))))
        .then((rows) => {
          if (!Array.isArray(rows)) throw new TypeError('the lookup answered no list of rows');
          const found = new Map(rows.map((row) => [this.keyOf(row), row]));
          for (const key of slice) {
            for (const one of batch.get(key)!) one.resolve(found.get(key));
          }
        })
        .catch((error: unknown) => {
          for (const one of waiting) one.reject(error);
        });
    }
  }
}
