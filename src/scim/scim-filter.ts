import { type Filter, parse } from 'scim2-parse-filter';
import { MAX_ID } from '../common/patterns.js';
import { ScimError } from './scim-error.js';
import type { FilterStorage, Operand } from './scim-user-storage.js';

/** Adds a value to the statement's parameters and returns its placeholder. */
export type Param = (value: unknown) => string;

const invalidFilter = (message: string) => new ScimError(400, message, 'invalidFilter');

const ORDERING: Record<string, string> = { gt: '>', ge: '>=', lt: '<', le: '<=' };
const MAX_FILTER_LENGTH = 2048;

/** Parses a SCIM filter (RFC 7644 §3.4.2.2) with scim2-parse-filter; 400 invalidFilter if it fails. */
export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH) {
    throw invalidFilter(`filter is longer than ${MAX_FILTER_LENGTH} characters`);
  }
  try {
    return parse(text);
  } catch {
    throw invalidFilter('filter is not a valid SCIM filter');
  }
}

/**
 * Whether `filter` matches at most one resource: `eq` on an attribute the schema declares unique
 * (a provider's `userName eq "…"` before each create), so its page needs no order.
 */
export function matchesOne(filter: Filter | undefined, storage: FilterStorage): boolean {
  if (filter?.op !== 'eq') return false;
  const { attribute, sub, extension } = storage.resolve(filter.attrPath);
  const unique = attribute.uniqueness === 'server' || attribute.uniqueness === 'global';
  return unique && sub === undefined && extension === undefined;
}

/** `%` and `_` match themselves in a LIKE pattern (the default escape is the backslash). */
function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/**
 * Compiles a parsed filter to an SQL condition over a resource type's table (its storage). Every value goes through
 * `param` (a placeholder), never into the text. Comparisons of a value that may be absent are
 * wrapped in coalesce(…, false) under a `not`, so that `not (title eq "x")` holds for a user
 * without a title; outside one, NULL already counts as false, and `userName eq "x"` and
 * `externalId eq "x"` stay plain index lookups.
 */
export class FilterCompiler {
  constructor(
    private readonly storage: FilterStorage,
    private readonly param: Param,
  ) {}

  compile(filter: Filter, negated = false, element?: string): string {
    switch (filter.op) {
      case 'and':
      case 'or': {
        const { filters } = filter;
        const parts = filters.map((part) => this.compile(part, negated, element));
        return `(${parts.join(filter.op === 'and' ? ' AND ' : ' OR ')})`;
      }
      case 'not':
        return `NOT (${this.compile(filter.filter, !negated, element)})`;
      case '[]': {
        if (element !== undefined) throw invalidFilter('value filters cannot be nested');
        const { attrPath, valFilter } = filter;
        const path = this.storage.resolve(attrPath);
        if (!path.attribute.multiValued || path.sub) {
          throw invalidFilter(`${attrPath} is not a multi-valued attribute`);
        }
        // Inside the brackets, names are the attribute's sub-attributes.
        const inner = (e: string) => this.compileElement(valFilter, attrPath, e);
        return this.storage.anyElement(path, inner);
      }
      default:
        return this.leaf(filter, negated, element);
    }
  }

  private compileElement(filter: Filter, parent: string, element: string): string {
    const qualify = (node: Filter): Filter => {
      if ('filters' in node) return { ...node, filters: node.filters.map(qualify) };
      if (node.op === 'not') return { ...node, filter: qualify(node.filter) };
      if (node.op === '[]') throw invalidFilter('value filters cannot be nested');
      return { ...node, attrPath: `${parent}.${(node as { attrPath: string }).attrPath}` };
    };
    return this.compile(qualify(filter), false, element);
  }

  private leaf(
    filter: Extract<Filter, { attrPath: string }>,
    negated: boolean,
    element: string | undefined,
  ): string {
    const path = this.storage.resolve(filter.attrPath);
    const inArray = path.attribute.multiValued;
    if (filter.op === 'pr') {
      if (element !== undefined) return `${this.storage.operand(path, element).sql} IS NOT NULL`;
      return this.storage.present(path);
    }
    const { compValue } = filter as Extract<Filter, { compValue: unknown }>;
    if (inArray && element === undefined) {
      const condition = (e: string) =>
        this.compare(this.storage.operand(path, e), filter.op, compValue);
      return this.storage.anyElement(path, condition);
    }
    const comparison = this.compare(this.storage.operand(path, element), filter.op, compValue);
    return negated ? `coalesce(${comparison}, false)` : comparison;
  }

  private compare(operand: Operand, op: string, value: unknown): string {
    if (value === null) {
      if (op === 'eq') return `${operand.sql} IS NULL`;
      if (op === 'ne') return `${operand.sql} IS NOT NULL`;
      throw invalidFilter(`${op} cannot compare with null`);
    }
    switch (operand.kind) {
      case 'boolean':
        if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne')) {
          throw invalidFilter(`a boolean attribute takes eq or ne with true or false`);
        }
        return `${operand.sql} ${op === 'eq' ? '=' : '<>'} ${this.param(value)}`;
      case 'dateTime':
        if (typeof value !== 'string' || Number.isNaN(Date.parse(value)) || !this.ordered(op)) {
          throw invalidFilter('a dateTime attribute takes eq, ne, gt, ge, lt or le with a date');
        }
        return `${operand.sql} ${this.operator(op)} ${this.param(new Date(value).toISOString())}::timestamptz`;
      case 'id':
        if (typeof value !== 'string') throw invalidFilter('id is compared with a string');
        if (
          (op === 'eq' || op === 'ne') &&
          /^[1-9][0-9]{0,9}$/.test(value) &&
          Number(value) <= MAX_ID
        ) {
          return `${operand.sql} ${this.operator(op)} ${this.param(Number(value))}`;
        }
        return this.text({ ...operand, sql: `${operand.sql}::text` }, op, value);
      default:
        if (typeof value !== 'string')
          throw invalidFilter(`a string attribute is compared with a string`);
        return this.text(operand, op, value);
    }
  }

  private ordered(op: string): boolean {
    return op === 'eq' || op === 'ne' || op in ORDERING;
  }

  private operator(op: string): string {
    return op === 'eq' ? '=' : op === 'ne' ? '<>' : ORDERING[op];
  }

  private text({ sql, caseExact }: Operand, op: string, value: string): string {
    const fold = (expression: string) => (caseExact ? expression : `lower(${expression})`);
    const pattern = {
      co: `%${escapeLike(value)}%`,
      sw: `${escapeLike(value)}%`,
      ew: `%${escapeLike(value)}`,
    }[op];
    if (pattern !== undefined) return `${fold(sql)} LIKE ${fold(this.param(pattern))}`;
    if (!this.ordered(op)) throw invalidFilter(`unknown operator ${op}`);
    return `${fold(sql)} ${this.operator(op)} ${fold(this.param(value))}`;
  }
}
