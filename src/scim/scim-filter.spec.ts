import { matchesOne, parseFilter } from './scim-filter.js';
import { type FilterStorage, resolveFilterPath } from './scim-user-storage.js';

/** What matchesOne asks of a storage: the schema's description of a path. */
const storage = { resolve: resolveFilterPath } as unknown as FilterStorage;
const one = (filter: string) => matchesOne(parseFilter(filter), storage);

describe('matchesOne: a filter that can match at most one user needs no order', () => {
  it('holds for eq on userName, the attribute the schema declares unique, in any case', () => {
    expect(one('userName eq "ada"')).toBe(true);
    expect(one('USERNAME eq "ada"')).toBe(true);
    expect(one('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "ada"')).toBe(true);
  });

  it('does not hold for another operator, another attribute, or a combination', () => {
    expect(one('userName co "ada"')).toBe(false);
    expect(one('userName sw "ada"')).toBe(false);
    expect(one('externalId eq "7"')).toBe(false);
    expect(one('emails.value eq "ada@example.com"')).toBe(false);
    expect(one('userName eq "ada" or userName eq "grace"')).toBe(false);
    expect(one('not (userName eq "ada")')).toBe(false);
  });

  it('does not hold without a filter', () => {
    expect(matchesOne(undefined, storage)).toBe(false);
  });
});
