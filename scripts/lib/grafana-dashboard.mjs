// The Grafana dashboard of the service (monitoring/grafana-dashboard.json, written by
// `npm run monitoring:dashboard`) from its content in monitoring/dashboard.yaml. Every panel and
// query uses the data source picked in the `datasource` variable (no UID is written in); panel
// positions are computed from the rows, not kept by hand.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { formatAs } from './format.mjs';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const DASHBOARD_SOURCE = path.join(ROOT, 'monitoring', 'dashboard.yaml');
export const DASHBOARD_FILE = path.join(ROOT, 'monitoring', 'grafana-dashboard.json');

/** Every panel and query: the Prometheus data source the `datasource` variable names. */
export const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/**
 * @typedef {object} PanelSpec
 * @property {string} title
 * @property {string} description
 * @property {'timeseries' | 'stat'} [type]
 * @property {string} [unit]
 * @property {number} [width] of 24 columns
 * @property {{ expr: string; legend: string }[]} queries
 * @property {{ color: string; value: number | null }[]} [thresholds]
 */

/**
 * A Grafana panel at (x, y).
 * @param {PanelSpec} spec
 * @param {number} id
 * @param {{ x: number; y: number; w: number; h: number }} gridPos
 */
function panel(spec, id, gridPos) {
  const thresholds = spec.thresholds ?? [{ color: 'green', value: null }];
  return {
    id,
    type: spec.type ?? 'timeseries',
    title: spec.title,
    description: spec.description,
    datasource: DATASOURCE,
    gridPos,
    fieldConfig: {
      defaults: {
        ...(spec.unit && { unit: spec.unit }),
        thresholds: { mode: 'absolute', steps: thresholds },
      },
      overrides: [],
    },
    options:
      spec.type === 'stat'
        ? {
            reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
            colorMode: 'value',
            graphMode: 'none',
          }
        : {
            legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
            tooltip: { mode: 'multi', sort: 'desc' },
          },
    targets: spec.queries.map(({ expr, legend }, i) => ({
      datasource: DATASOURCE,
      expr,
      legendFormat: legend,
      refId: String.fromCharCode(65 + i),
    })),
  };
}

/** The dashboard as Grafana imports it. */
export function dashboard() {
  const { rows } = /** @type {{ rows: { title: string; panels: PanelSpec[] }[] }} */ (
    parse(readFileSync(DASHBOARD_SOURCE, 'utf8'))
  );
  /** @type {object[]} */
  const panels = [];
  let y = 0;
  for (const row of rows) {
    const gridPos = { x: 0, y, w: 24, h: 1 };
    panels.push({
      id: panels.length + 1,
      type: 'row',
      title: row.title,
      collapsed: false,
      gridPos,
      panels: [],
    });
    y += 1;
    let x = 0;
    for (const spec of row.panels) {
      const w = spec.width ?? 12;
      if (x + w > 24) {
        x = 0;
        y += 8;
      }
      panels.push(panel(spec, panels.length + 1, { x, y, w, h: 8 }));
      x += w;
    }
    y += 8;
  }
  return {
    title: 'Users service',
    description:
      'SLOs, traffic, latency, database and process of the users service (docs/monitoring.md).',
    tags: ['users-service'],
    editable: true,
    graphTooltip: 1,
    refresh: '30s',
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    timezone: 'browser',
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus' },
        {
          name: 'namespace',
          label: 'Namespace',
          type: 'query',
          datasource: DATASOURCE,
          query: { query: 'label_values(up{job="users-service"}, namespace)', refId: 'namespace' },
          refresh: 2,
          includeAll: true,
          multi: true,
          allValue: '.*',
          current: { text: 'All', value: '$__all' },
        },
      ],
    },
    panels,
  };
}

/** The dashboard file as committed: JSON formatted as the repository formats it. */
export function renderDashboard() {
  return formatAs(DASHBOARD_FILE, JSON.stringify(dashboard()));
}
