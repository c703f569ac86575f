import type { ObjectLiteral } from 'typeorm';
import type { EntitySql } from '../database/entity-sql.js';
import { ListCounts } from './list-counts.js';
import type { Queryable } from '../database/queryable.js';
import { reads } from '../database/statement.js';
import { type CursorValue, decodeCursor, encodeCursor } from './list-cursor.js';
import type { ListQueryDto, SortKey } from './list-query.dto.js';
import { keysetCondition, type KeysetColumn } from './keyset.js';

/** One page of a list and what its headers need. */
export interface ListPage<T> {
  items: T[];
  /** Rows matching the filter (X-Total-Count). */
  total: number;
  /** Cursor mode: the token of the next page, when rows follow. */
  nextCursor?: string;
  /** Where the page stands, for its Link header: the page number, or undefined in cursor mode. */
  page?: number;
  limit?: number;
  /** The change feed's token the page reflects (`Changes-Token`), for lists that have one. */
  changesToken?: string;
  /** With `snapshotValue` asked (ListScope): its value in the page's own statement. */
  snapshotValue?: string;
}

/** The same page with each item mapped (an entity to its response body). */
export function mapPage<T, U>(page: ListPage<T>, toItem: (item: T) => U): ListPage<U> {
  return { ...page, items: page.items.map(toItem) };
}

/** Which rows a list holds. */
export interface ListScope {
  /** The list and its filters (`users?role=admin`): a cursor is valid only for its own scope. */
  scope: string;
  /** The list's conditions, written with `param` placeholders. */
  filters?: (param: (value: unknown) => string) => string[];
  /**
   * Its key in list_counts (src/lists/list-counts.ts); undefined for a list the triggers do not
   * count, whose total is then a count(*) of the rows its filters select.
   */
  countKey: string | undefined;
  /**
   * SQL of one text value to read in the page's own statement, so in its snapshot and on its
   * server, with no statement of its own: where the change feed stood when the page was read.
   */
  snapshotValue?: string;
}

/** The parts of a list statement that depend on the request. */
export interface ListWindow {
  /** Cursor mode after the first page: the keyset condition, to AND with the filters. */
  after?: string;
  orderBy: string;
  limit: number;
  offset: number;
}

/**
 * Turns a list query into SQL for one entity, in both modes:
 * - page mode: ORDER BY the sort keys then id, LIMIT/OFFSET;
 * - cursor mode: the same ORDER BY, a keyset condition from the cursor (so a page costs
 *   O(limit) at any depth and a walk neither skips nor repeats rows that exist throughout it),
 *   and one look-ahead row that tells whether a next page exists.
 * Columns come from the entity's metadata through an allow-list of API field → property, so a
 * client's text never reaches the SQL.
 */
export class ListPlan<E extends ObjectLiteral, F extends string> {
  constructor(
    private readonly sql: EntitySql<E>,
    private readonly fields: Record<F, keyof E & string>,
    private readonly counts: ListCounts,
  ) {}

  /**
   * One page of the list, read through `db` (the primary, or a replica): the rows matching
   * `filters` (conditions built with the statement's placeholders) in the query's window, and the
   * total kept under `countKey`.
   */
  async fetch(
    db: Queryable,
    query: ListQueryDto<F>,
    { scope, filters = () => [], countKey, snapshotValue }: ListScope,
  ): Promise<ListPage<E>> {
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    const conditions = filters(param);
    const count = this.counter(countKey, [...conditions], [...params]);
    const window = this.window(query, scope, param);
    if (window.after) conditions.push(window.after);
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const windowSql = `FROM ${this.sql.table} ${where} ORDER BY ${window.orderBy} LIMIT ${window.limit} OFFSET ${window.offset}`;
    // The value is computed once per statement (an InitPlan) and sent beside each row.
    const select = db.query<ObjectLiteral>(
      reads(
        `SELECT ${this.sql.selectList}${snapshotValue ? `, (${snapshotValue}) AS "snapshotValue"` : ''} ${windowSql}`,
      ),
      params,
    );
    // A cursor page always reports the total: it is read beside the page, so a walk waits for one
    // round trip per page, not two. A numbered page may not need it (see page()).
    const [found, total] =
      query.cursor === undefined
        ? [await select, undefined]
        : await Promise.all([select, count(db)]);
    const { rows, value } = snapshotValue
      ? await this.withSnapshotValue(db, found, snapshotValue, windowSql, params)
      : { rows: found, value: undefined };
    const page = await this.page(
      rows.map((row) => this.sql.toEntity(row)),
      query,
      scope,
      async () => total ?? count(db),
    );
    return snapshotValue ? { ...page, snapshotValue: value } : page;
  }

  /** Reads the list's total: its list_counts key, else a count of the filtered rows. */
  private counter(
    countKey: string | undefined,
    conditions: string[],
    params: unknown[],
  ): (db: Queryable) => Promise<number> {
    if (countKey !== undefined) return (db) => this.counts.count(db, countKey);
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const sql = reads(`SELECT count(*)::int AS "total" FROM ${this.sql.table} ${where}`);
    return async (db) => (await db.query<{ total: number }>(sql, params))[0].total;
  }

  /**
   * The page's rows without their `snapshotValue` column, and the value. An empty page has no row
   * to carry it: the page is read again, in a statement that always has one (a value read apart
   * from the page could be younger than the page, and the changes between would be lost).
   */
  private async withSnapshotValue(
    db: Queryable,
    found: ObjectLiteral[],
    snapshotValue: string,
    windowSql: string,
    params: unknown[],
  ): Promise<{ rows: ObjectLiteral[]; value: string }> {
    const rows =
      found.length > 0
        ? found
        : await db.query<ObjectLiteral>(
            reads(
              `SELECT h."snapshotValue", p.* FROM (SELECT (${snapshotValue}) AS "snapshotValue") h ` +
                `LEFT JOIN LATERAL (SELECT ${this.sql.selectList} ${windowSql}) p ON true`,
            ),
            params,
          );
    return {
      rows: rows.filter((row) => row.id !== null).map(({ snapshotValue: _value, ...row }) => row),
      value: rows[0].snapshotValue as string,
    };
  }

  /**
   * @param scope what the rows are: the list and its filters (`users?role=admin`); a cursor is
   *   valid only for the scope and sort it was issued for
   * @param param adds a value to the statement's parameters and returns its placeholder
   */
  window(query: ListQueryDto<F>, scope: string, param: (value: unknown) => string): ListWindow {
    const keys = this.keys(query.sort);
    const orderBy = keys.map(({ column, direction }) => `${column} ${direction}`).join(', ');
    if (query.cursor === undefined) {
      const page = query.page ?? 1;
      return { orderBy, limit: query.limit, offset: (page - 1) * query.limit };
    }
    const window = { orderBy, limit: query.limit + 1, offset: 0 };
    if (query.cursor === '') return window;
    const values = decodeCursor(query.cursor, this.binding(scope, query.sort), keys.length);
    return { ...window, after: keysetCondition(keys, values, param) };
  }

  /**
   * The page from the rows `window` selected. `count` reads the total; in page mode it is skipped
   * when the page itself tells the total (a page that is not full is the last).
   */
  async page(
    rows: E[],
    query: ListQueryDto<F>,
    scope: string,
    count: () => Promise<number>,
  ): Promise<ListPage<E>> {
    if (query.cursor === undefined) {
      const page = query.page ?? 1;
      const known =
        rows.length < query.limit && (rows.length > 0 || page === 1)
          ? (page - 1) * query.limit + rows.length
          : undefined;
      return { items: rows, total: known ?? (await count()), page, limit: query.limit };
    }
    const more = rows.length > query.limit;
    const items = more ? rows.slice(0, query.limit) : rows;
    const last = items[items.length - 1];
    return {
      items,
      total: await count(),
      nextCursor: more ? this.cursorAfter(last, query.sort, scope) : undefined,
      limit: query.limit,
    };
  }

  private cursorAfter(row: E, sort: SortKey<F>[], scope: string): string {
    const values = this.properties(sort).map((property): CursorValue => {
      const value: unknown = row[property];
      if (value instanceof Date) return value.toISOString();
      return value as CursorValue;
    });
    return encodeCursor(this.binding(scope, sort), values);
  }

  private binding(scope: string, sort: SortKey<F>[]): string {
    return `${scope} sort=${sort.map((key) => `${key.direction} ${key.field}`).join(',')}`;
  }

  /** The sort's properties, then `id` (ties are broken by id ascending) unless sorted by it. */
  private properties(sort: SortKey<F>[]): (keyof E & string)[] {
    return this.directed(sort).map(([property]) => property);
  }

  private directed(sort: SortKey<F>[]): [keyof E & string, SortKey['direction']][] {
    const keys = sort.map(({ field, direction }): [keyof E & string, SortKey['direction']] => [
      this.fields[field],
      direction,
    ]);
    if (!keys.some(([property]) => property === 'id')) keys.push(['id', 'ASC']);
    return keys;
  }

  private keys(sort: SortKey<F>[]): KeysetColumn[] {
    return this.directed(sort).map(([property, direction]) => ({
      column: this.sql.column(property),
      direction,
      nullable: this.sql.isNullable(property),
    }));
  }
}
