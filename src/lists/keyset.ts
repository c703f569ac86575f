import type { SortDirection } from './list-query.dto.js';

export interface KeysetColumn {
  /** The quoted column. */
  column: string;
  direction: SortDirection;
  /** NULLs sort last ascending and first descending (PostgreSQL's default). */
  nullable: boolean;
}

/**
 * The WHERE condition selecting the rows strictly after `values` in the order of `keys` (the
 * last key is unique, so the order is total). `param` turns a value into a placeholder.
 *
 * Keys of one direction and without NULLs become a row comparison, `(a, id) > ($1, $2)`, which an
 * index on (a, id) answers directly. Otherwise the condition is spelled out key by key, led by a
 * bound on the first key (`a <= $1`) that an index range scan can use.
 */
export function keysetCondition(
  keys: KeysetColumn[],
  values: unknown[],
  param: (value: unknown) => string,
): string {
  const uniform = keys.every((key) => key.direction === keys[0].direction && !key.nullable);
  if (uniform) {
    const columns = keys.map((key) => key.column).join(', ');
    const placeholders = values.map(param).join(', ');
    const operator = keys[0].direction === 'ASC' ? '>' : '<';
    return keys.length === 1
      ? `${columns} ${operator} ${placeholders}`
      : `(${columns}) ${operator} (${placeholders})`;
  }
  const placeholders = values.map((value) => (value === null ? null : param(value)));
  // Row i follows when the keys before i tie and key i is after; some keys have nothing after.
  const alternatives = keys.flatMap((key, i) => {
    const beyond = after(key, placeholders[i]);
    if (beyond === undefined) return [];
    const ties = keys.slice(0, i).map((tie, j) => equal(tie, placeholders[j]));
    return [[...ties, beyond].join(' AND ')];
  });
  const condition = alternatives.length === 0 ? 'FALSE' : `(${alternatives.join(' OR ')})`;
  const lead = leadingBound(keys[0], placeholders[0]);
  return lead ? `${lead} AND ${condition}` : condition;
}

function equal(key: KeysetColumn, placeholder: string | null): string {
  return placeholder === null ? `${key.column} IS NULL` : `${key.column} = ${placeholder}`;
}

/** The rows whose key is strictly after the cursor's; undefined when none can be. */
function after(key: KeysetColumn, placeholder: string | null): string | undefined {
  if (placeholder === null) {
    // NULLs are last ascending (nothing follows them) and first descending.
    return key.direction === 'ASC' ? undefined : `${key.column} IS NOT NULL`;
  }
  if (key.direction === 'DESC') return `${key.column} < ${placeholder}`;
  return key.nullable
    ? `(${key.column} > ${placeholder} OR ${key.column} IS NULL)`
    : `${key.column} > ${placeholder}`;
}

/** A redundant bound on the first key, so an index on it is scanned from the cursor on. */
function leadingBound(key: KeysetColumn, placeholder: string | null): string | undefined {
  if (key.nullable || placeholder === null) return undefined;
  return `${key.column} ${key.direction === 'ASC' ? '>=' : '<='} ${placeholder}`;
}
