import { InvalidArgumentError } from './errors.js';
import { paginationLinks, parseListQuery, parseSort } from './list-query.js';

const spec = {
  sortFields: ['id', 'name', 'createdAt'] as const,
  filters: { role: { pattern: /^[a-z]+$/, message: 'bad role' } },
};

describe(parseListQuery.name, () => {
  it('applies the defaults', () => {
    expect(parseListQuery({}, spec)).toEqual({ page: 1, limit: 20, sort: [], filters: {} });
  });

  it('parses page, limit, sort and filters, ignoring unknown parameters', () => {
    expect(
      parseListQuery(
        { page: '3', limit: '100', sort: '-createdAt,name', role: 'admin', x: ['1', '2'] },
        spec,
      ),
    ).toEqual({
      page: 3,
      limit: 100,
      sort: [
        { field: 'createdAt', direction: 'DESC' },
        { field: 'name', direction: 'ASC' },
      ],
      filters: { role: 'admin' },
    });
  });

  it.each([
    [{ page: '0' }, 'page must be an integer between 1 and 1000000'],
    [{ page: '1000001' }, 'page must be an integer between 1 and 1000000'],
    [{ page: '007' }, 'page must be an integer between 1 and 1000000'],
    [{ limit: '101' }, 'limit must be an integer between 1 and 100'],
    [{ limit: ' 5' }, 'limit must be an integer between 1 and 100'],
    [{ limit: '5 ' }, 'limit must be an integer between 1 and 100'],
    [{ limit: '1e1' }, 'limit must be an integer between 1 and 100'],
    [{ limit: ['1', '2'] }, 'query parameter limit must be given at most once'],
    [{ role: 'Admin' }, 'bad role'],
    [{ role: ['a', 'b'] }, 'query parameter role must be given at most once'],
  ])('rejects %j', (raw, message) => {
    expect(() => parseListQuery(raw, spec)).toThrow(new InvalidArgumentError(message));
  });
});

describe(parseSort.name, () => {
  const fields = ['id', 'name'] as const;

  it.each([
    ['', 'sort must not contain an empty field'],
    [',name', 'sort must not contain an empty field'],
    ['--name', 'sort field -name is not one of id, name'],
    ['name,-name', 'sort field name is named twice'],
    ['NAME', 'sort field NAME is not one of id, name'],
    ['constructor', 'sort field constructor is not one of id, name'],
  ])('rejects %j', (value, message) => {
    expect(() => parseSort(value, fields)).toThrow(new InvalidArgumentError(message));
  });
});

describe(paginationLinks.name, () => {
  it('gives first and last only for a single page, last = 1 when empty', () => {
    expect(paginationLinks('/users', '', 1, 20, 0)).toBe(
      '</users?page=1>; rel="first", </users?page=1>; rel="last"',
    );
  });

  it('keeps the other parameters and replaces page in place', () => {
    expect(paginationLinks('/users', 'page=2&limit=10&role=a%20b', 2, 10, 35)).toBe(
      '</users?page=1&limit=10&role=a+b>; rel="first", </users?page=1&limit=10&role=a+b>; rel="prev", ' +
        '</users?page=3&limit=10&role=a+b>; rel="next", </users?page=4&limit=10&role=a+b>; rel="last"',
    );
  });

  it('points prev of a page past the end at the last page', () => {
    expect(paginationLinks('/users', 'page=9', 9, 10, 15)).toBe(
      '</users?page=1>; rel="first", </users?page=2>; rel="prev", </users?page=2>; rel="last"',
    );
  });
});
