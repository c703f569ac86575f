import type { MembershipTables } from '../groups/groups.repository.js';
import { parseFilter } from './scim-filter.js';
import { UserStorageSql } from './scim-user-storage.js';

/** The look-up function a filter reads through, and the parameters it adds; none for most. */
function lookup(filter: string) {
  const params: unknown[] = [];
  const storage = new UserStorageSql(
    (property) => `"users"."${property}"`,
    {} as unknown as MembershipTables,
  );
  const source = storage.lookup(parseFilter(filter), (value) => `$${params.push(value)}`);
  return { source, params };
}

describe('UserStorageSql.lookup: the database function a provider look-up reads through', () => {
  it('takes one eq of userName or externalId with a string, however the path is written', () => {
    expect(lookup('userName eq "Ada@Example.com"')).toEqual({
      source: '"users_with_user_name"($1)',
      params: ['Ada@Example.com'],
    });
    expect(lookup('USERNAME eq "ada"').source).toBe('"users_with_user_name"($1)');
    expect(lookup('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "ada"').source).toBe(
      '"users_with_user_name"($1)',
    );
    expect(lookup('externalId eq "ext-1"')).toEqual({
      source: '"users_with_external_id"($1)',
      params: ['ext-1'],
    });
  });

  it('leaves every other filter to the compiler, adding no parameter', () => {
    for (const filter of [
      'userName eq null',
      'userName eq 5',
      'externalId eq true',
      'userName ne "ada"',
      'userName co "ada"',
      'displayName eq "Ada"',
      'name.givenName eq "Ada"',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "7"',
      'userName eq "ada" and active eq true',
      'not (userName eq "ada")',
      'emails[value eq "ada@example.com"]',
    ]) {
      expect([filter, lookup(filter)]).toEqual([filter, { source: undefined, params: [] }]);
    }
    const storage = new UserStorageSql(() => '', {} as unknown as MembershipTables);
    expect(storage.lookup(undefined, () => '$1')).toBeUndefined();
  });
});
