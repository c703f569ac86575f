// Admission when the event loop itself is saturated (LoopSaturation): on the real app, with the
// loop kept busy 95 ms of every 100 ms, new work is turned away as `saturated` before the
// concurrency limit is asked (no request is in flight), the probes are still answered, and once
// the loop has idle time again everything is admitted. The figures (goodput under an open loop
// and a flood) are the benchmark's: `npm run bench -- --overload` (docs/overload.md).
import http from 'node:http';
import { httpCall, until } from '../support/fault-load.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

const OVERLOADED = { error: 'the service is over its capacity: retry after 1 s' };

describe('admission while the event loop is saturated (e2e)', () => {
  let t: TestApp;
  const agent = new http.Agent({ keepAlive: true });
  let hog: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    t = await createTestApp({ env: { OVERLOAD_LOOP_BUSY_PERCENT: '90' } });
  });

  afterAll(async () => {
    clearInterval(hog);
    agent.destroy();
    await resetDatabase(t.dataSource);
    await t?.close();
  });

  const call = (method: string, target: string, body?: unknown) =>
    httpCall(t.url, agent, method, target, body);
  const saturatedRejections = async () =>
    [
      ...(await (await fetch(t.metricsUrl)).text()).matchAll(
        /^overload_rejected_total\{transport="http",class="\w+",reason="saturated"\} (\d+)$/gm,
      ),
    ].reduce((sum, match) => sum + Number(match[1]), 0);

  it('turns new work away while the loop is saturated, answers probes, and admits again once it is not', async () => {
    const { id } = (await call('POST', '/users', { name: 'Ada' })).body as { id: number };
    expect(await saturatedRejections()).toBe(0);

    // The loop runs 95 ms of every 100 ms: work of its own, which no admission decision sees.
    hog = setInterval(() => {
      const end = performance.now() + 95;
      while (performance.now() < end);
    }, 100);
    let shed: Awaited<ReturnType<typeof call>> | undefined;
    await until('a read turned away as saturated', async () => {
      const answer = await call('GET', `/users/${id}`);
      if (answer.status === 503) shed = answer;
      return shed !== undefined;
    });
    expect(shed!.body).toEqual(OVERLOADED);
    expect(await saturatedRejections()).toBeGreaterThan(0);
    // The probes are never shed.
    expect((await call('GET', '/health')).status).toBe(200);
    expect((await call('GET', '/health/ready')).status).toBe(200);

    clearInterval(hog);
    hog = undefined;
    // The admitted share grows back window by window: reads, then every class, are served.
    await until(
      'reads served again',
      async () => (await call('GET', `/users/${id}`)).status === 200,
    );
    const rejectedSoFar = await saturatedRejections();
    await until('ten reads in a row served', async () => {
      for (let i = 0; i < 10; i++) {
        if ((await call('GET', `/users/${id}`)).status !== 200) return false;
      }
      return true;
    });
    expect((await call('POST', '/users', { name: 'Bob' })).status).toBe(201);
    expect(await saturatedRejections()).toBeGreaterThanOrEqual(rejectedSoFar);
  });
});
