// SLOs in Sloth's `prometheus/v1` spec format (monitoring/slos.yaml) turned into Prometheus rule
// groups as Sloth generates them, with the same record names and labels, so the dashboards and
// any later switch to the `sloth` binary see the same series: an SLI error ratio per window, the
// SLO's metadata, and the multiwindow, multi-burn-rate alerts of the Google SRE workbook
// ("Alerting on SLOs"), for a 30-day period. Written in Node because no Go tools are at hand.

/** @typedef {{ record?: string; alert?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }} Rule */
/** @typedef {{ name: string; interval?: string; rules: Rule[] }} RuleGroup */
/**
 * @typedef {object} SlothAlert
 * @property {boolean} [disable]
 * @property {Record<string, string>} [labels]
 * @property {Record<string, string>} [annotations]
 */
/**
 * @typedef {object} SlothSlo
 * @property {string} name
 * @property {number} objective Percent of good events, e.g. 99.9.
 * @property {string} [description]
 * @property {Record<string, string>} [labels]
 * @property {{ events: { error_query: string; total_query: string } }} sli
 * @property {{ name: string; labels?: Record<string, string>; annotations?: Record<string, string>; page_alert?: SlothAlert; ticket_alert?: SlothAlert }} alerting
 */
/**
 * @typedef {object} SlothSpec
 * @property {string} version
 * @property {string} service
 * @property {Record<string, string>} [labels]
 * @property {SlothSlo[]} slos
 */

/** The SLO period: the error budget is what a 30-day window may spend. */
export const PERIOD = '30d';
export const PERIOD_DAYS = 30;

/**
 * The workbook's pairs for a 30-day budget: a page when 2% of it goes in an hour or 5% in six
 * hours, a ticket when 10% goes in three days (and Sloth's 2h/1d pair at 3x between them). Each
 * long window has a short one (1/12 of it) that must burn too, so an alert resolves within
 * minutes of the burn stopping.
 */
export const BURN_WINDOWS = {
  page: [
    { long: '1h', short: '5m', factor: 14.4 },
    { long: '6h', short: '30m', factor: 6 },
  ],
  ticket: [
    { long: '1d', short: '2h', factor: 3 },
    { long: '3d', short: '6h', factor: 1 },
  ],
};

/**
 * How long a burn must hold before the alert fires. Sloth sets none (the short windows already
 * stop a blip); these add a pending state, so one evaluation over the line (a scrape lost, a pod
 * just started with short rate windows) does not page.
 */
export const ALERT_FOR = { page: '2m', ticket: '15m' };

const UNITS_MS = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
  y: 31_536_000_000,
};

/** Every window an SLI ratio is recorded for: those the alerts use, then the period's. */
const SLI_WINDOWS = [
  ...new Set(
    Object.values(BURN_WINDOWS).flatMap((pairs) => pairs.flatMap((p) => [p.short, p.long])),
  ),
].sort((a, b) => durationMs(a) - durationMs(b));

/**
 * A Prometheus duration (`5m`, `1h30m`) in milliseconds.
 * @param {string} text
 * @returns {number}
 */
export function durationMs(text) {
  const parts = [...text.matchAll(/(\d+)(ms|[smhdwy])/g)];
  if (parts.length === 0 || parts.map(([part]) => part).join('') !== text) {
    throw new Error(`not a Prometheus duration: ${text}`);
  }
  return parts.reduce(
    (sum, [, count, unit]) => sum + Number(count) * UNITS_MS[/** @type {keyof UNITS_MS} */ (unit)],
    0,
  );
}

/**
 * Milliseconds as a Prometheus duration in the largest unit that divides them (`72m`, `5s`).
 * @param {number} ms
 * @returns {string}
 */
export function formatDuration(ms) {
  if (!Number.isInteger(ms) || ms <= 0) throw new Error(`not a positive whole duration: ${ms} ms`);
  for (const unit of /** @type {const} */ (['d', 'h', 'm', 's'])) {
    if (ms % UNITS_MS[unit] === 0) return `${ms / UNITS_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * A percentage as a ratio, without binary floating-point noise (99.9 -> 0.999, not 0.99900…01).
 * @param {number} percent
 */
const ratio = (percent) => Number((percent / 100).toPrecision(12));
/** @param {number} objective */
const errorBudget = (objective) => ratio(100 - objective);

/** @param {string} text @param {string} what */
function required(text, what) {
  if (typeof text !== 'string' || text.trim() === '')
    throw new Error(`SLO spec: ${what} is required`);
  return text;
}

/**
 * Checks what Sloth's validation checks for the fields used here; throws naming the problem.
 * @param {SlothSpec} spec
 */
export function validateSpec(spec) {
  if (spec.version !== 'prometheus/v1') throw new Error(`SLO spec: version must be prometheus/v1`);
  required(spec.service, 'service');
  const names = new Set();
  for (const slo of spec.slos ?? []) {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(slo.name))
      throw new Error(`SLO spec: bad SLO name ${slo.name}`);
    if (names.has(slo.name)) throw new Error(`SLO spec: SLO ${slo.name} named twice`);
    names.add(slo.name);
    if (!(slo.objective > 0 && slo.objective < 100)) {
      throw new Error(`SLO spec: ${slo.name}: objective must be between 0 and 100 (exclusive)`);
    }
    for (const key of /** @type {const} */ (['error_query', 'total_query'])) {
      if (
        !required(slo.sli?.events?.[key], `${slo.name}: sli.events.${key}`).includes('{{.window}}')
      ) {
        throw new Error(`SLO spec: ${slo.name}: sli.events.${key} has no {{.window}}`);
      }
    }
    required(slo.alerting?.name, `${slo.name}: alerting.name`);
  }
  if (names.size === 0) throw new Error('SLO spec: no SLOs');
}

/** @param {Record<string, string>} labels */
const selector = (labels) =>
  `{${Object.entries(labels)
    .map(([name, value]) => `${name}="${value}"`)
    .join(', ')}}`;

/**
 * @param {SlothSpec} spec
 * @param {SlothSlo} slo
 */
function ids(spec, slo) {
  return {
    sloth_id: `${spec.service}-${slo.name}`,
    sloth_service: spec.service,
    sloth_slo: slo.name,
  };
}

/**
 * The recording rules of one SLI: its error ratio over each window, and over the period as the
 * mean of the 5-minute ratios (one rate over 30 days would cost far more to evaluate).
 * @param {SlothSpec} spec
 * @param {SlothSlo} slo
 * @returns {Rule[]}
 */
function sliRules(spec, slo) {
  const id = ids(spec, slo);
  const labels = { ...spec.labels, ...slo.labels, ...id };
  const { error_query: errors, total_query: total } = slo.sli.events;
  const errorRatio = (/** @type {string} */ window) =>
    `(${errors.trim().replaceAll('{{.window}}', window)})\n/\n(${total.trim().replaceAll('{{.window}}', window)})\n`;
  const base = `slo:sli_error:ratio_rate${SLI_WINDOWS[0]}${selector(id)}`;
  return [
    ...SLI_WINDOWS.map((window) => ({
      record: `slo:sli_error:ratio_rate${window}`,
      expr: errorRatio(window),
      labels: { ...labels, sloth_window: window },
    })),
    {
      record: `slo:sli_error:ratio_rate${PERIOD}`,
      expr: `sum_over_time(${base}[${PERIOD}])\n/ ignoring (sloth_window)\ncount_over_time(${base}[${PERIOD}])\n`,
      labels: { ...labels, sloth_window: PERIOD },
    },
  ];
}

/**
 * Sloth's metadata rules: objective, budget, burn rates and the budget left, per SLO.
 * @param {SlothSpec} spec
 * @param {SlothSlo} slo
 * @returns {Rule[]}
 */
function metaRules(spec, slo) {
  const id = ids(spec, slo);
  const labels = { ...spec.labels, ...slo.labels, ...id };
  const budget = `slo:error_budget:ratio${selector(id)}`;
  const per = `/ on (sloth_id, sloth_slo, sloth_service) group_left\n`;
  return [
    { record: 'slo:objective:ratio', expr: `vector(${ratio(slo.objective)})`, labels },
    { record: 'slo:error_budget:ratio', expr: `vector(${errorBudget(slo.objective)})`, labels },
    { record: 'slo:time_period:days', expr: `vector(${PERIOD_DAYS})`, labels },
    {
      record: 'slo:current_burn_rate:ratio',
      expr: `slo:sli_error:ratio_rate${SLI_WINDOWS[0]}${selector(id)}\n${per}${budget}\n`,
      labels,
    },
    {
      record: 'slo:period_burn_rate:ratio',
      expr: `slo:sli_error:ratio_rate${PERIOD}${selector(id)}\n${per}${budget}\n`,
      labels,
    },
    {
      record: 'slo:period_error_budget_remaining:ratio',
      expr: `1 - slo:period_burn_rate:ratio${selector(id)}`,
      labels,
    },
    {
      record: 'sloth_slo_info',
      expr: 'vector(1)',
      labels: { ...labels, sloth_objective: String(slo.objective), sloth_spec: spec.version },
    },
  ];
}

/**
 * The page and the ticket alert of one SLO: fires while both windows of any pair burn the budget
 * faster than the pair's factor.
 * @param {SlothSpec} spec
 * @param {SlothSlo} slo
 * @returns {Rule[]}
 */
function alertRules(spec, slo) {
  const id = selector(ids(spec, slo));
  const budget = errorBudget(slo.objective);
  const burning = (/** @type {string} */ window, /** @type {number} */ factor) =>
    `max(slo:sli_error:ratio_rate${window}${id} > (${factor} * ${budget})) without (sloth_window)`;
  const { alerting } = slo;
  return /** @type {const} */ (['page', 'ticket']).flatMap((severity) => {
    const options = alerting[`${severity}_alert`] ?? {};
    if (options.disable) return [];
    const expr = BURN_WINDOWS[severity]
      .map(
        ({ long, short, factor }) =>
          `(\n    ${burning(short, factor)}\n    and\n    ${burning(long, factor)}\n)`,
      )
      .join('\nor\n');
    return [
      {
        alert: alerting.name,
        expr: `${expr}\n`,
        for: ALERT_FOR[severity],
        labels: { ...alerting.labels, ...options.labels, sloth_severity: severity },
        annotations: {
          title: `(${severity}) {{$labels.sloth_service}} {{$labels.sloth_slo}} SLO error budget burn rate is too fast.`,
          summary: `{{$labels.sloth_service}} {{$labels.sloth_slo}} SLO error budget burn rate is over expected.`,
          ...alerting.annotations,
          ...options.annotations,
        },
      },
    ];
  });
}

/**
 * Every rule group of a spec, three per SLO as Sloth names them.
 * @param {SlothSpec} spec
 * @returns {RuleGroup[]}
 */
export function sloRuleGroups(spec) {
  validateSpec(spec);
  return spec.slos.flatMap((slo) => {
    const suffix = `${spec.service}-${slo.name}`;
    const alerts = alertRules(spec, slo);
    return [
      { name: `sloth-slo-sli-recordings-${suffix}`, rules: sliRules(spec, slo) },
      { name: `sloth-slo-meta-recordings-${suffix}`, rules: metaRules(spec, slo) },
      ...(alerts.length > 0 ? [{ name: `sloth-slo-alerts-${suffix}`, rules: alerts }] : []),
    ];
  });
}
