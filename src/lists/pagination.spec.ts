import { jest } from '@jest/globals';
import type { EntitySql } from '../database/entity-sql.js';
import type { ListCounts } from './list-counts.js';
import { encodeCursor } from './list-cursor.js';
import type { ListQueryDto } from './list-query.dto.js';
import { cursorLinks, ListPlan, pageLinks } from './pagination.js';

interface Row {
  id: number;
  name: string;
  createdAt: Date;
}
const columns = { id: '"id"', name: '"name"', createdAt: '"created_at"' };
const sql = {
  column: (property: keyof Row) => columns[property],
  isNullable: () => false,
} as unknown as EntitySql<Row>;
const plan = new ListPlan<Row, 'id' | 'name' | 'createdAt'>(
  sql,
  {
    id: 'id',
    name: 'name',
    createdAt: 'createdAt',
  },
  {} as ListCounts,
);
const query = (values: Partial<ListQueryDto<'id' | 'name' | 'createdAt'>>) =>
  ({ limit: 20, sort: [], ...values }) as ListQueryDto<'id' | 'name' | 'createdAt'>;
const noParams = () => {
  throw new Error('no parameter expected');
};

describe(ListPlan.name, () => {
  it('maps API fields to columns and breaks ties by id', () => {
    const sort = [
      { field: 'createdAt', direction: 'DESC' },
      { field: 'name', direction: 'ASC' },
    ] as const;
    expect(plan.window(query({ sort: [...sort], page: 3 }), 'users', noParams)).toEqual({
      orderBy: '"created_at" DESC, "name" ASC, "id" ASC',
      limit: 20,
      offset: 40,
    });
  });

  it('does not add id twice', () => {
    expect(
      plan.window(query({ sort: [{ field: 'id', direction: 'DESC' }] }), 'users', noParams).orderBy,
    ).toBe('"id" DESC');
    expect(plan.window(query({}), 'users', noParams).orderBy).toBe('"id" ASC');
  });

  it('reads one row ahead in cursor mode, and continues after the cursor', () => {
    expect(plan.window(query({ cursor: '' }), 'users', noParams)).toEqual({
      orderBy: '"id" ASC',
      limit: 21,
      offset: 0,
    });
    const params: unknown[] = [];
    const token = encodeCursor('users sort=', [7]);
    expect(
      plan.window(query({ cursor: token }), 'users', (value) => `$${params.push(value)}`),
    ).toEqual({ after: '"id" > $1', orderBy: '"id" ASC', limit: 21, offset: 0 });
    expect(params).toEqual([7]);
  });

  it('knows the total from a page that is not full', async () => {
    const count = jest.fn(() => Promise.resolve(99));
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i }) as Row);
    expect((await plan.page([], query({}), 'users', count)).total).toBe(0);
    expect((await plan.page(rows(7), query({}), 'users', count)).total).toBe(7);
    expect((await plan.page(rows(5), query({ page: 3 }), 'users', count)).total).toBe(45);
    expect(count).not.toHaveBeenCalled();
  });

  it('counts for a full page or a page past the end', async () => {
    const count = jest.fn(() => Promise.resolve(99));
    const full = Array.from({ length: 20 }, (_, i) => ({ id: i }) as Row);
    expect((await plan.page(full, query({}), 'users', count)).total).toBe(99);
    expect((await plan.page([], query({ page: 4 }), 'users', count)).total).toBe(99);
    expect(count).toHaveBeenCalledTimes(2);
  });

  it('cuts the look-ahead row and issues a cursor after the last row shown', async () => {
    const rows = [1, 2, 3].map((id) => ({ id, name: `n${id}`, createdAt: new Date(id) }));
    const page = await plan.page(rows, query({ cursor: '', limit: 2 }), 'users', () =>
      Promise.resolve(3),
    );
    expect(page.items.map((row) => row.id)).toEqual([1, 2]);
    expect(page.nextCursor).toBe(encodeCursor('users sort=', [2]));
    const last = await plan.page(rows, query({ cursor: '', limit: 3 }), 'users', () =>
      Promise.resolve(3),
    );
    expect(last.nextCursor).toBeUndefined();
  });
});

describe(pageLinks.name, () => {
  it('gives first and last only for a single page, last = 1 when empty', () => {
    expect(pageLinks('/users', '', 1, 20, 0)).toBe(
      '</users?page=1>; rel="first", </users?page=1>; rel="last"',
    );
  });

  it('keeps the other parameters and replaces page in place', () => {
    expect(pageLinks('/users', 'page=2&limit=10&role=a%20b', 2, 10, 35)).toBe(
      '</users?page=1&limit=10&role=a+b>; rel="first", </users?page=1&limit=10&role=a+b>; rel="prev", ' +
        '</users?page=3&limit=10&role=a+b>; rel="next", </users?page=4&limit=10&role=a+b>; rel="last"',
    );
  });

  it('points prev of a page past the end at the last page', () => {
    expect(pageLinks('/users', 'page=9', 9, 10, 15)).toBe(
      '</users?page=1>; rel="first", </users?page=2>; rel="prev", </users?page=2>; rel="last"',
    );
  });
});

describe(cursorLinks.name, () => {
  it('gives first (the empty cursor) and next, keeping the other parameters in place', () => {
    expect(cursorLinks('/users', 'cursor=abc.def&limit=5&role=x', 'ghi.jkl')).toBe(
      '</users?cursor=&limit=5&role=x>; rel="first", </users?cursor=ghi.jkl&limit=5&role=x>; rel="next"',
    );
  });

  it('gives no next on the last page', () => {
    expect(cursorLinks('/users', 'cursor=', undefined)).toBe('</users?cursor=>; rel="first"');
  });
});
