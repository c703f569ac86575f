import { Registry } from 'prom-client';
import { ScrapedMetrics } from './scraped-metrics.js';

describe(ScrapedMetrics.name, () => {
  const figures = { total: 7, current: 3 };

  const scrapedWith = (source: () => Promise<typeof figures | undefined>) => {
    const registry = new Registry();
    const scraped = new ScrapedMetrics(registry, source);
    scraped.counter('probe_total', 'a total the source keeps', (f) => f.total);
    scraped.gauge('probe_current', 'a value the source reads', (f) => f.current);
    return registry;
  };

  it('reads the source once per scrape for all its metrics, and samples each', async () => {
    let reads = 0;
    const registry = scrapedWith(() => {
      reads++;
      return Promise.resolve(figures);
    });
    const text = await registry.metrics();
    expect(text).toMatch(/^probe_total 7$/m);
    expect(text).toMatch(/^probe_current 3$/m);
    expect(reads).toBe(1);
    await registry.metrics();
    expect(reads).toBe(2);
  });

  it('shows the source as it is at each scrape: a total that started again, too', async () => {
    let total = 7;
    const registry = scrapedWith(() => Promise.resolve({ total, current: 3 }));
    expect(await registry.metrics()).toMatch(/^probe_total 7$/m);
    total = 2;
    expect(await registry.metrics()).toMatch(/^probe_total 2$/m);
  });

  it('leaves every metric without a sample when the read fails, and reads again next time', async () => {
    let fail = true;
    const registry = scrapedWith(() =>
      fail ? Promise.reject(new Error('the database is down')) : Promise.resolve(figures),
    );
    const text = await registry.metrics();
    expect(text).toMatch(/^# TYPE probe_total counter$/m);
    expect(text).not.toMatch(/^probe_total /m);
    expect(text).not.toMatch(/^probe_current /m);
    fail = false;
    expect(await registry.metrics()).toMatch(/^probe_current 3$/m);
  });
});
