// A Prometheus server from the Debian package `prometheus`, for the tests: on a free 127.0.0.1
// port, its configuration, rules and TSDB in a temp directory of its own, scraping the given
// targets and evaluating the rules every `intervalS` seconds; and the two questions the tests ask
// it through its HTTP API (a query, the alerts).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.mjs';
import { findTool, startListening } from './system-tools.mjs';

/**
 * @typedef {object} PrometheusServer
 * @property {string} url http://127.0.0.1:PORT
 * @property {number | undefined} pid
 * @property {() => string} output
 * @property {() => Promise<void>} stop
 */

/**
 * @typedef {object} ActiveAlert
 * @property {Record<string, string>} labels
 * @property {Record<string, string>} annotations
 * @property {'pending' | 'firing'} state
 * @property {string} activeAt
 */

/**
 * The prometheus binary, or undefined when it is not installed.
 * @returns {string | undefined}
 */
export function prometheusPath() {
  return findTool('prometheus');
}

/**
 * Starts Prometheus scraping `targets` (host:port, path /metrics) as job `job`, with the rule
 * file `rules` (its text), scrape and evaluation every `intervalS` seconds, keeping its data for
 * `retention` (Prometheus's default, 15d, without). `stop()` stops it by its PID and removes its
 * directory.
 * @param {{ job: string; targets: string[]; rules: string; intervalS?: number; retention?: string }} options
 * @returns {Promise<PrometheusServer>}
 */
export async function startPrometheus({ job, targets, rules, intervalS = 1, retention }) {
  const binary = prometheusPath();
  if (!binary) throw new Error('prometheus is not installed (Debian: apt-get install prometheus)');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'users-prometheus-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  const port = await freePort();
  await writeFile(path.join(dir, 'rules.yaml'), rules);
  // JSON is YAML: no serialiser needed for the configuration.
  const config = {
    global: {
      scrape_interval: `${intervalS}s`,
      scrape_timeout: `${intervalS}s`,
      evaluation_interval: `${intervalS}s`,
    },
    rule_files: [path.join(dir, 'rules.yaml')],
    scrape_configs: [{ job_name: job, static_configs: [{ targets }] }],
  };
  await writeFile(path.join(dir, 'prometheus.yml'), JSON.stringify(config, null, 2));
  const daemon = await startListening(
    binary,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
      ...(retention ? [`--storage.tsdb.retention.time=${retention}`] : []),
    ],
    { name: 'prometheus', port, cleanup: remove, asUser: false },
  );
  return {
    url: `http://127.0.0.1:${port}`,
    pid: daemon.pid,
    output: daemon.output,
    async stop() {
      await daemon.stop('SIGTERM');
      await remove();
    },
  };
}

/**
 * GET a Prometheus API path and return its `data`; throws on an error answer.
 * @param {string} url
 * @param {string} pathAndQuery
 * @returns {Promise<unknown>}
 */
async function api(url, pathAndQuery) {
  const response = await fetch(`${url}${pathAndQuery}`, { signal: AbortSignal.timeout(5000) });
  const body = /** @type {{ status: string; data?: unknown; error?: string }} */ (
    await response.json()
  );
  if (body.status !== 'success') throw new Error(`Prometheus ${pathAndQuery}: ${body.error}`);
  return body.data;
}

/**
 * The pending and firing alerts (GET /api/v1/alerts).
 * @param {string} url
 * @returns {Promise<ActiveAlert[]>}
 */
export async function activeAlerts(url) {
  const data = /** @type {{ alerts: ActiveAlert[] }} */ (await api(url, '/api/v1/alerts'));
  return data.alerts;
}

/**
 * An instant query's samples (GET /api/v1/query): labels and value of each.
 * @param {string} url
 * @param {string} expr
 * @returns {Promise<{ metric: Record<string, string>; value: number }[]>}
 */
export async function instantQuery(url, expr) {
  const data =
    /** @type {{ result: { metric: Record<string, string>; value: [number, string] }[] }} */ (
      await api(url, `/api/v1/query?query=${encodeURIComponent(expr)}`)
    );
  return data.result.map(({ metric, value }) => ({ metric, value: Number(value[1]) }));
}
