import { orderBy, totalFromPage } from './sql.js';

describe(orderBy.name, () => {
  const columns = { id: 'id', name: 'name', createdAt: 'created_at' };

  it('maps API fields to columns and breaks ties by id', () => {
    expect(
      orderBy(
        [
          { field: 'createdAt', direction: 'DESC' },
          { field: 'name', direction: 'ASC' },
        ],
        columns,
      ),
    ).toBe('ORDER BY created_at DESC, name ASC, id ASC');
  });

  it('does not add id twice', () => {
    expect(orderBy([{ field: 'id', direction: 'DESC' }], columns)).toBe('ORDER BY id DESC');
    expect(orderBy([], columns)).toBe('ORDER BY id ASC');
  });
});

describe(totalFromPage.name, () => {
  it('knows the total from a page that is not full', () => {
    expect(totalFromPage(1, 20, 0)).toBe(0);
    expect(totalFromPage(1, 20, 7)).toBe(7);
    expect(totalFromPage(3, 20, 5)).toBe(45);
  });

  it('needs a count for a full page or a page past the end', () => {
    expect(totalFromPage(1, 20, 20)).toBeUndefined();
    expect(totalFromPage(4, 20, 0)).toBeUndefined();
  });
});
