import { jest } from '@jest/globals';
import type { EntitySql } from '../database/entity-sql.js';
import type { ListCounts } from './list-counts.js';
import { encodeCursor } from './list-cursor.js';
import type { ListQueryDto } from './list-query.dto.js';
import { ListPlan } from './list-plan.js';

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
