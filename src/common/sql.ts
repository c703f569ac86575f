import type { SortKey } from './list-query.js';

/**
 * `ORDER BY` for a list: the sort keys mapped through an allow-list of API field → column (a
 * client's text never reaches the SQL), then `id` ascending to break ties so pages never overlap.
 */
export function orderBy<F extends string>(sort: SortKey<F>[], columns: Record<F, string>): string {
  const keys = sort.map(({ field, direction }) => `${columns[field]} ${direction}`);
  if (!sort.some(({ field }) => columns[field] === 'id')) keys.push('id ASC');
  return `ORDER BY ${keys.join(', ')}`;
}

/**
 * The total for X-Total-Count without a COUNT query when the page itself tells it: a page that is
 * not full (and not past the end) is the last one.
 */
export function totalFromPage(page: number, limit: number, rows: number): number | undefined {
  return rows < limit && (rows > 0 || page === 1) ? (page - 1) * limit + rows : undefined;
}
