// The availability SLO alert on a real Prometheus (Debian package `prometheus`): the built
// service on a PostgreSQL of its own, Prometheus on loopback scraping it every second with the
// generated rules at a time scale of 60 (every window and `for` divided by 60, the expressions
// otherwise the same: docs/monitoring.md), and a reading client. PostgreSQL is stopped: the page
// alert of the REST reads' SLO goes pending, then firing, seen through Prometheus's HTTP API
// (/api/v1/alerts), with the alert on its cause; PostgreSQL is started again and the alert
// resolves. The watchdog fires from the start. Prints how long each step took. Skipped, saying
// so, where prometheus is missing.
import http from 'node:http';
import { setTimeout as pause } from 'node:timers/promises';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../../scripts/lib/embedded-pg.mjs';
import { requestJson } from '../../scripts/lib/http-client.mjs';
import { renderRuleFile, TEAM, WATCHDOG_ALERT } from '../../scripts/lib/prometheus-rules.mjs';
import {
  activeAlerts,
  instantQuery,
  prometheusPath,
  startPrometheus,
  type ActiveAlert,
  type PrometheusServer,
} from '../../scripts/lib/prometheus-server.mjs';
import { ALERT_FOR, durationMs } from '../../scripts/lib/slo-rules.mjs';
import {
  waitFor,
  waitUntilReady,
  type ServiceProcess,
} from '../../scripts/lib/service-process.mjs';
import { buildService, startService } from '../support/service-process.js';
import { describeWhenInstalled } from '../support/when-installed.js';

const PROMETHEUS = prometheusPath();
const TIME_SCALE = 60;
const ALERT = 'UsersServiceRestReadsErrorBudgetBurn';
/** The page's `for` at this scale: 2 minutes / 60. */
const PAGE_FOR_MS = durationMs(ALERT_FOR.page) / TIME_SCALE;
const CAUSE = 'UsersServiceDatabaseDown';
/** Reads a second the client sends: enough for every 5-second window, little CPU. */
const READS_PER_S = 40;
/** The load stops by itself after this long, whatever happens to the test. */
const LOAD_MAX_MS = 5 * 60_000;
/** Bounds: the page's windows are 5 s and 1 min here; its `for` is 2 s. */
const PENDING_BOUND_MS = 30_000;
const FIRING_BOUND_MS = 30_000;
/** The slower page pair's short window (30 min / 60 = 30 s) must empty of errors first. */
const RESOLVE_BOUND_MS = 120_000;

/** A client reading a user and a list at a steady pace until stopped; counts statuses. */
function startReads(url: string, userId: number) {
  const agent = new http.Agent({ keepAlive: true });
  const statuses = new Map<number | string, number>();
  let running = true;
  const done = (async () => {
    const deadline = Date.now() + LOAD_MAX_MS;
    for (let n = 0; running && Date.now() < deadline; n++) {
      const path = n % 2 === 0 ? `/users/${userId}` : '/users?limit=5';
      const { status } = await requestJson(url, 'GET', path, undefined, { agent, timeoutMs: 5000 });
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      // Pacing, not waiting for anything: READS_PER_S at most.
      await pause(1000 / READS_PER_S);
    }
  })();
  return {
    statuses,
    async stop() {
      running = false;
      await done;
      agent.destroy();
    },
  };
}

/** The page alert of the SLO (sloth_severity page), as Prometheus reports it now. */
async function pageAlert(url: string, name = ALERT): Promise<ActiveAlert | undefined> {
  return (await activeAlerts(url)).find(
    (alert) =>
      alert.labels.alertname === name && (name !== ALERT || alert.labels.sloth_severity === 'page'),
  );
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describeWhenInstalled(
  'SLO alerts on a real Prometheus (e2e)',
  PROMETHEUS ? [] : ['prometheus'],
  'apt-get install prometheus',
  () => {
    let pg: ThrowawayPostgres;
    let service: ServiceProcess;
    let prometheus: PrometheusServer;
    let reads: ReturnType<typeof startReads> | undefined;
    /** What the suite started, each one's stop: run newest first. */
    const stops: (() => Promise<unknown>)[] = [];

    beforeAll(async () => {
      buildService();
      // Persistent: stopping it keeps the data for the restart; stop() removes it at the end.
      pg = await startThrowawayPostgres({
        prefix: 'users-slo-pg-',
        database: 'users_slo',
        persistent: true,
      });
      stops.push(() => pg.stop());
      service = await startService({
        DATABASE_URL: pg.url!,
        MIGRATE_ON_BOOT: 'true',
        DB_CONNECT_TIMEOUT_MS: '500',
        SHUTDOWN_DRAIN_MS: '0',
        LOG_LEVEL: 'error',
      });
      stops.push(() => service.stop());
      await waitUntilReady(service, { timeoutMs: 30_000 });
      prometheus = await startPrometheus({
        job: 'users-service',
        targets: [`127.0.0.1:${service.metricsPort}`],
        rules: await renderRuleFile({ timeScale: TIME_SCALE }),
      });
      stops.push(() => prometheus.stop());
    }, 120_000);

    afterAll(async () => {
      await reads?.stop();
      for (const stop of stops.reverse()) await stop();
    }, 60_000);

    it('fires the watchdog from the rules’ first evaluations, with no traffic', async () => {
      let watchdog: ActiveAlert | undefined;
      await waitFor(
        `${WATCHDOG_ALERT} firing`,
        async () =>
          (watchdog = await pageAlert(prometheus.url, WATCHDOG_ALERT))?.state === 'firing',
        FIRING_BOUND_MS,
      );
      expect(watchdog?.labels).toEqual({
        alertname: WATCHDOG_ALERT,
        severity: 'none',
        team: TEAM,
      });
      expect(watchdog?.annotations.runbook_url).toMatch(
        /docs\/runbooks\/UsersServiceWatchdog\.md$/,
      );
    }, 60_000);

    it('pages while PostgreSQL is down (pending, then firing) and resolves once it is back', async () => {
      const created = await requestJson(service.url, 'POST', '/users', { name: 'Ada' });
      expect(created.status).toBe(201);
      reads = startReads(service.url, (created.body as { id: number }).id);

      // Prometheus scrapes the service, and the SLI of the last 5 (scaled) minutes reads 0.
      const sli = `slo:sli_error:ratio_rate5m{sloth_slo="rest-reads-availability"}`;
      await waitFor(
        'the reads SLI at 0 in Prometheus',
        async () => (await instantQuery(prometheus.url, sli)).some(({ value }) => value === 0),
        30_000,
      );
      expect(await pageAlert(prometheus.url)).toBeUndefined();

      await pg.server.stop();
      const stopped = Date.now();
      let seen: ActiveAlert | undefined;
      await waitFor(
        `${ALERT} pending`,
        async () => (seen = await pageAlert(prometheus.url)) !== undefined,
        PENDING_BOUND_MS,
      );
      const pendingMs = Date.now() - stopped;
      // Seen before its `for` ran out: pending, never straight to firing.
      expect(seen?.state).toBe('pending');
      await waitFor(
        `${ALERT} firing`,
        async () => (seen = await pageAlert(prometheus.url))?.state === 'firing',
        FIRING_BOUND_MS,
      );
      const firedAt = Date.now();
      const firingMs = firedAt - stopped;
      // It fired no sooner than its scaled `for` after it went pending (activeAt).
      expect(firedAt - Date.parse(seen!.activeAt)).toBeGreaterThanOrEqual(PAGE_FOR_MS);
      expect(seen?.labels).toEqual(
        expect.objectContaining({
          severity: 'critical',
          sloth_severity: 'page',
          sloth_slo: 'rest-reads-availability',
        }),
      );
      expect(seen?.annotations.runbook_url).toMatch(new RegExp(`docs/runbooks/${ALERT}\\.md$`));
      // The alert on the cause fires beside it.
      await waitFor(
        `${CAUSE} firing`,
        async () => (await pageAlert(prometheus.url, CAUSE))?.state === 'firing',
        FIRING_BOUND_MS,
      );
      const causeMs = Date.now() - stopped;

      await pg.server.start();
      const restarted = Date.now();
      await waitUntilReady(service, { timeoutMs: 30_000 });
      await waitFor(
        `${ALERT} resolved`,
        async () => (await pageAlert(prometheus.url)) === undefined,
        RESOLVE_BOUND_MS,
      );
      const resolvedMs = Date.now() - restarted;
      await reads.stop();

      console.log(
        [
          `Prometheus (${PROMETHEUS}), time scale ${TIME_SCALE} (page for: ${ALERT_FOR.page} -> ${seconds(PAGE_FOR_MS)}), scrape and evaluation every 1 s:`,
          `  PostgreSQL stopped -> ${ALERT} pending after ${seconds(pendingMs)}, firing after ${seconds(firingMs)}`,
          `  ${CAUSE} firing after ${seconds(causeMs)}`,
          `  PostgreSQL started -> ${ALERT} resolved after ${seconds(resolvedMs)}`,
          `  reads answered: ${JSON.stringify(Object.fromEntries(reads.statuses))}`,
        ].join('\n'),
      );
      // The client saw the outage as 503s, and successes on both sides of it.
      expect(reads.statuses.get(503)).toBeGreaterThan(0);
      expect(reads.statuses.get(200)).toBeGreaterThan(0);
    }, 300_000);
  },
);
