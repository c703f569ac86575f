import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * Metrics whose values are read from one source when Prometheus scrapes (a statement on the
 * database), never per request. A scrape collects every metric at once: they share the read in
 * flight, and a read that fails leaves them all without samples for that scrape.
 */
export class ScrapedMetrics<T> {
  private reading?: Promise<T | undefined>;

  constructor(
    private readonly registry: Registry,
    private readonly source: () => Promise<T | undefined>,
  ) {}

  /** A counter holding a total the source keeps (it may start again: a reset to Prometheus). */
  counter(name: string, help: string, value: (figures: T) => number): Counter {
    const collect = this.collector<Counter>(value, (counter, total) => counter.inc(total));
    return new Counter({ name, help, registers: [this.registry], collect });
  }

  gauge(name: string, help: string, value: (figures: T) => number): Gauge {
    const collect = this.collector<Gauge>(value, (gauge, current) => gauge.set(current));
    return new Gauge({ name, help, registers: [this.registry], collect });
  }

  /** prom-client's collect(), called with the metric as `this`: its sample from this scrape's read. */
  private collector<M extends Counter | Gauge>(
    value: (figures: T) => number,
    record: (metric: M, sample: number) => void,
  ): (this: M) => Promise<void> {
    const read = () => this.read();
    return async function (this: M) {
      const figures = await read();
      this.reset();
      // Without figures, no sample: a 0 would read as a counter's reset, or a value, to Prometheus.
      if (figures) record(this, value(figures));
      else this.remove();
    };
  }

  private read(): Promise<T | undefined> {
    this.reading ??= this.source()
      .catch(() => undefined)
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}
