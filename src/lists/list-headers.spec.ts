import { cursorLinks, pageLinks } from './list-headers.js';

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
