// Number and table formatting shared by the benchmark's reports.

/** `n` with `digits` decimals, or an en dash when it is not a number. */
export const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/** Seconds since `since` (a performance.now() value), one decimal. */
export const secs = (since) => ((performance.now() - since) / 1000).toFixed(1);

/** a ÷ b, or null when either is missing or b is 0. */
export const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : null);

/** `n` rounded to `digits` decimals for the JSON results, or null. */
export const round = (n, digits) =>
  Number.isFinite(n) ? Math.round(n * 10 ** digits) / 10 ** digits : null;

/** The median of some numbers (the mean of the middle two for an even count), or NaN. */
export function median(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** A markdown table. */
export function table(headers, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}
