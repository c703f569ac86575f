import { ScimError, invalidValue } from './scim-error.js';
import { DEFAULT_COUNT, MAX_RESULTS } from './scim-schema.js';

/** The parameters of a SCIM query (RFC 7644 §3.4.2), from a GET's query or a POST /.search body. */
export interface ScimListQuery {
  filter?: string;
  sortBy?: string;
  sortOrder?: 'ascending' | 'descending';
  startIndex: number;
  count: number;
  attributes?: string;
  excludedAttributes?: string;
}

const TEXT_PARAMETERS = ['filter', 'sortBy', 'sortOrder', 'attributes', 'excludedAttributes'];

function text(source: Record<string, unknown>, name: string): string | undefined {
  const value = source[name];
  if (value === undefined) return undefined;
  // A search body lists attributes as an array; a query repeats no parameter.
  if (
    Array.isArray(value) &&
    name.endsWith('ttributes') &&
    value.every((v) => typeof v === 'string')
  ) {
    return value.join(',');
  }
  if (typeof value !== 'string') throw invalidValue(`${name} must be given once, as a string`);
  return value;
}

/** An integer given as digits (a query) or a number (a search body). */
function integer(source: Record<string, unknown>, name: string, fallback: number): number {
  const value = source[name];
  if (value === undefined) return fallback;
  const number = typeof value === 'string' && /^-?[0-9]{1,10}$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number)) {
    throw invalidValue(`${name} must be an integer`);
  }
  return number;
}

/**
 * Reads and checks a query: startIndex below 1 counts as 1 and a negative count as 0 (RFC 7644
 * §3.4.2.4); a count above MAX_RESULTS is 400 tooMany, not silently cut.
 */
export function scimListQuery(source: Record<string, unknown>): ScimListQuery {
  const [filter, sortBy, sortOrder, attributes, excludedAttributes] = TEXT_PARAMETERS.map((name) =>
    text(source, name),
  );
  const count = Math.max(0, integer(source, 'count', DEFAULT_COUNT));
  if (count > MAX_RESULTS) {
    throw new ScimError(400, `count must be at most ${MAX_RESULTS}`, 'tooMany');
  }
  const order = sortOrder?.toLowerCase();
  if (order !== undefined && order !== 'ascending' && order !== 'descending') {
    throw invalidValue('sortOrder must be ascending or descending');
  }
  if (attributes && excludedAttributes) {
    throw invalidValue('attributes and excludedAttributes cannot be given together');
  }
  return {
    filter,
    sortBy,
    sortOrder: order,
    startIndex: Math.max(1, integer(source, 'startIndex', 1)),
    count,
    attributes,
    excludedAttributes,
  };
}
