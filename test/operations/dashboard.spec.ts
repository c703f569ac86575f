// monitoring/grafana-dashboard.json: committed as `npm run monitoring:dashboard` writes it,
// importable into any Grafana (a data source variable, no UID written in), every query on that
// data source, and no two panels on the same place. Which metrics its panels may query is
// checked against the running service in exported-metrics.e2e-spec.ts.
import { readFileSync } from 'node:fs';
import {
  DASHBOARD_FILE,
  DATASOURCE,
  dashboard,
  renderDashboard,
} from '../../scripts/lib/grafana-dashboard.mjs';

interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  datasource?: unknown;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { datasource: unknown; expr: string; refId: string }[];
}

const board = dashboard() as {
  uid?: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown; datasource?: unknown }[] };
};

/** Every value of a key named `uid`, anywhere in a JSON value. */
function uids(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(uids);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => (key === 'uid' ? [inner] : uids(inner)));
}

describe('Grafana dashboard (monitoring/grafana-dashboard.json)', () => {
  it('is committed exactly as `npm run monitoring:dashboard` writes it', async () => {
    expect(readFileSync(DASHBOARD_FILE, 'utf8')).toBe(await renderDashboard());
  });

  it('picks its Prometheus in a data source variable and writes no UID of its own', () => {
    const [datasource] = board.templating.list;
    expect(datasource).toEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
    expect(DATASOURCE).toEqual({ type: 'prometheus', uid: '${datasource}' });
    // The only UID anywhere is the variable's; the dashboard's own is Grafana's to assign.
    expect(board.uid).toBeUndefined();
    expect(new Set(uids(JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'))))).toEqual(
      new Set(['${datasource}']),
    );
  });

  it('queries that data source from every panel, each described, on a grid without overlaps', () => {
    const panels = board.panels.filter((panel) => panel.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(20);
    const cells = new Set<string>();
    for (const panel of board.panels) {
      const { x, y, w, h } = panel.gridPos;
      expect([panel.title, x + w <= 24]).toEqual([panel.title, true]);
      for (let i = x; i < x + w; i++) {
        for (let j = y; j < y + h; j++) {
          expect([panel.title, cells.has(`${i},${j}`)]).toEqual([panel.title, false]);
          cells.add(`${i},${j}`);
        }
      }
    }
    for (const panel of panels) {
      expect([panel.title, panel.datasource]).toEqual([panel.title, DATASOURCE]);
      expect([panel.title, (panel.description ?? '').length > 20]).toEqual([panel.title, true]);
      expect(panel.targets?.length).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(target.datasource).toEqual(DATASOURCE);
    }
    expect(new Set(board.panels.map((panel) => panel.id)).size).toBe(board.panels.length);
  });

  it('filters every per-instance or per-namespace query by the namespace variable', () => {
    const exprs = board.panels.flatMap((panel) => panel.targets ?? []).map(({ expr }) => expr);
    // The SLO panels read recording rules, which carry the namespace of the series they sum.
    expect(exprs.filter((expr) => expr.startsWith('slo:')).length).toBeGreaterThanOrEqual(3);
    for (const expr of exprs) {
      // An objective's budget is one constant for every namespace.
      if (expr.startsWith('slo:error_budget:ratio')) continue;
      expect([expr, expr.includes('namespace=~"$namespace"')]).toEqual([expr, true]);
    }
  });
});
