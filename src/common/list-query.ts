import { type PipeTransform } from '@nestjs/common';
import { InvalidArgumentError } from './errors.js';

export const MAX_PAGE = 1_000_000;
export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;

export type SortDirection = 'ASC' | 'DESC';

export interface SortKey<F extends string> {
  field: F;
  direction: SortDirection;
}

export interface ListQuery<F extends string, K extends string = never> {
  page: number;
  limit: number;
  sort: SortKey<F>[];
  filters: Partial<Record<K, string>>;
}

export interface ListSpec<F extends string, K extends string = never> {
  /** The fields a client may sort by, in the names the API uses. */
  sortFields: readonly F[];
  /** Exact-match filters and the pattern (with its error message) each value must match. */
  filters?: Record<K, { pattern: RegExp; message: string }>;
}

const DIGITS = /^[1-9][0-9]*$/;

function single(raw: Record<string, unknown>, name: string): string | undefined {
  const value = raw[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new InvalidArgumentError(`query parameter ${name} must be given at most once`);
  }
  return value;
}

function integer(value: string | undefined, name: string, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  // Digits only: no sign, no leading zero, no exponent; long inputs fail the range check.
  const n = DIGITS.test(value) && value.length <= 10 ? Number(value) : NaN;
  if (!(n >= 1 && n <= max)) {
    throw new InvalidArgumentError(`${name} must be an integer between 1 and ${max}`);
  }
  return n;
}

export function parseSort<F extends string>(
  value: string | undefined,
  fields: readonly F[],
): SortKey<F>[] {
  if (value === undefined) return [];
  const seen = new Set<string>();
  return value.split(',').map((item) => {
    const descending = item.startsWith('-');
    const field = descending ? item.slice(1) : item;
    if (field === '') throw new InvalidArgumentError('sort must not contain an empty field');
    if (!(fields as readonly string[]).includes(field)) {
      throw new InvalidArgumentError(`sort field ${field} is not one of ${fields.join(', ')}`);
    }
    if (seen.has(field)) throw new InvalidArgumentError(`sort field ${field} is named twice`);
    seen.add(field);
    return { field: field as F, direction: descending ? 'DESC' : 'ASC' };
  });
}

/**
 * Parses the query string of a collection list (`page`, `limit`, `sort`, filters) as CONTRACT.md
 * describes it. Unknown parameters are ignored; a known one given twice is an error.
 */
export function parseListQuery<F extends string, K extends string = never>(
  raw: Record<string, unknown>,
  spec: ListSpec<F, K>,
): ListQuery<F, K> {
  const filters: Partial<Record<K, string>> = {};
  for (const [name, { pattern, message }] of Object.entries(spec.filters ?? {}) as [
    K,
    { pattern: RegExp; message: string },
  ][]) {
    const value = single(raw, name);
    if (value === undefined) continue;
    if (!pattern.test(value)) throw new InvalidArgumentError(message);
    filters[name] = value;
  }
  return {
    page: integer(single(raw, 'page'), 'page', MAX_PAGE, 1),
    limit: integer(single(raw, 'limit'), 'limit', MAX_LIMIT, DEFAULT_LIMIT),
    sort: parseSort(single(raw, 'sort'), spec.sortFields),
    filters,
  };
}

export class ParseListQueryPipe<
  F extends string,
  K extends string = never,
> implements PipeTransform<Record<string, unknown>, ListQuery<F, K>> {
  constructor(private readonly spec: ListSpec<F, K>) {}

  transform(raw: Record<string, unknown>): ListQuery<F, K> {
    return parseListQuery(raw, this.spec);
  }
}

export interface Page<T> {
  items: T[];
  total: number;
}

/**
 * The RFC 8288 `Link` header of one page of a list: relative URLs that keep the request's other
 * query parameters. `first` and `last` always; `prev` except on page 1; `next` before the last.
 */
export function paginationLinks(
  path: string,
  search: string,
  page: number,
  limit: number,
  total: number,
): string {
  const last = Math.max(1, Math.ceil(total / limit));
  const link = (target: number, rel: string) => {
    const params = new URLSearchParams(search);
    params.set('page', String(target));
    return `<${path}?${params.toString()}>; rel="${rel}"`;
  };
  const links = [link(1, 'first')];
  if (page > 1) links.push(link(Math.min(page - 1, last), 'prev'));
  if (page < last) links.push(link(page + 1, 'next'));
  links.push(link(last, 'last'));
  return links.join(', ');
}
