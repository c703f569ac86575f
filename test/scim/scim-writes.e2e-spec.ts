// SCIM writes beyond the providers' sequences: PATCH without a path, add and remove on
// multi-valued attributes, concurrent PATCHes, If-Match, and the round trip of every kind of
// declared attribute.
import {
  CORE_USER,
  ENTERPRISE_USER,
  entraUser,
  patchOp,
  scimError,
  scimGet,
  scimSend,
} from '../support/scim-api.js';
import { t, useUsersApi } from '../support/users-api.js';

describe('SCIM writes (e2e)', () => {
  useUsersApi();

  const full = {
    schemas: [CORE_USER, ENTERPRISE_USER],
    userName: 'grace',
    externalId: 'G-1',
    name: {
      formatted: 'Rear Admiral Grace Hopper',
      familyName: 'Hopper',
      givenName: 'Grace',
      middleName: 'Brewster',
      honorificPrefix: 'Rear Admiral',
      honorificSuffix: 'PhD',
    },
    displayName: 'Grace Hopper',
    nickName: 'Amazing Grace',
    profileUrl: 'https://example.com/grace',
    title: 'Rear Admiral',
    userType: 'Employee',
    preferredLanguage: 'en-US',
    locale: 'en-US',
    timezone: 'America/New_York',
    active: true,
    emails: [
      { value: 'grace@example.com', type: 'work', primary: true, display: 'Grace' },
      { value: 'grace@home.example', type: 'home' },
    ],
    phoneNumbers: [{ value: '+1 555 0100', type: 'work', primary: true }],
    addresses: [
      {
        streetAddress: '1 Navy Way',
        locality: 'Arlington',
        region: 'VA',
        postalCode: '22201',
        country: 'US',
        type: 'work',
        primary: true,
      },
    ],
    [ENTERPRISE_USER]: {
      employeeNumber: '1906',
      costCenter: 'CC-7',
      organization: 'Navy',
      division: 'Computing',
      department: 'COBOL',
      manager: { value: '42' },
    },
  };

  it('round-trips every declared attribute through create, replace and read', async () => {
    const created = await scimSend('post', '/Users', full).expect(201);
    expect(created.body).toEqual({ ...full, id: expect.any(String), meta: expect.any(Object) });
    const replaced = await scimSend('put', `/Users/${created.body.id}`, {
      ...full,
      title: 'Commodore',
    }).expect(200);
    expect(replaced.body).toEqual({
      ...created.body,
      title: 'Commodore',
      meta: expect.any(Object),
    });
    expect((await scimGet(`/Users/${created.body.id}`)).body).toEqual(replaced.body);
  });

  it('PATCH without a path merges attributes, dotted and extension names included', async () => {
    const { body: user } = await scimSend('post', '/Users', entraUser('ada@example.com'));
    const res = await scimSend(
      'patch',
      `/Users/${user.id}`,
      patchOp({
        op: 'replace',
        value: {
          'name.givenName': 'Augusta',
          NickName: 'Ada',
          [ENTERPRISE_USER]: { costCenter: 'CC-1' },
        },
      }),
    ).expect(200);
    expect(res.body.name).toEqual({ ...user.name, givenName: 'Augusta' });
    expect(res.body.nickName).toBe('Ada');
    expect(res.body[ENTERPRISE_USER]).toEqual({ ...user[ENTERPRISE_USER], costCenter: 'CC-1' });
  });

  it('adds to and removes from a multi-valued attribute, with a filter', async () => {
    const { body: user } = await scimSend('post', '/Users', full);
    const added = await scimSend(
      'patch',
      `/Users/${user.id}`,
      patchOp(
        { op: 'add', path: 'emails', value: [{ value: 'g@other.example', type: 'other' }] },
        { op: 'remove', path: 'emails[type eq "home"]' },
        { op: 'remove', path: 'addresses' },
        { op: 'add', path: 'phoneNumbers', value: [{ value: '+1 555 0199', primary: true }] },
      ),
    ).expect(200);
    expect(added.body.emails).toEqual([
      full.emails[0],
      { value: 'g@other.example', type: 'other' },
    ]);
    expect(added.body.addresses).toBeUndefined();
    // A new primary value takes the flag from the old one.
    expect(added.body.phoneNumbers).toEqual([
      { value: '+1 555 0100', type: 'work' },
      { value: '+1 555 0199', primary: true },
    ]);
  });

  it('keeps both of two concurrent PATCHes of one user (no lost update)', async () => {
    const { body: user } = await scimSend('post', '/Users', entraUser('ada@example.com'));
    const phones = ['+1 1', '+1 2', '+1 3', '+1 4'];
    await Promise.all(
      phones.map((value) =>
        scimSend(
          'patch',
          `/Users/${user.id}`,
          patchOp({ op: 'add', path: 'phoneNumbers', value: [{ value }] }),
        ).expect(200),
      ),
    );
    const read = await scimGet(`/Users/${user.id}`).expect(200);
    expect(read.body.phoneNumbers.map((p: { value: string }) => p.value).sort()).toEqual(phones);
    expect(read.body.meta.version).toBe('W/"5"');
  });

  it('If-Match on PATCH and DELETE: 412 on a stale version, and nothing changes', async () => {
    const { body: user } = await scimSend('post', '/Users', entraUser('ada@example.com'));
    const patch = patchOp({ op: 'replace', path: 'title', value: 'x' });
    await scimSend('patch', `/Users/${user.id}`, patch).set('If-Match', 'W/"1"').expect(200);
    const stale = await scimSend('patch', `/Users/${user.id}`, patch).set('If-Match', 'W/"1"');
    expect([stale.status, stale.body]).toEqual([412, scimError(412)]);
    await t.http().delete(`/scim/v2/Users/${user.id}`).set('If-Match', 'W/"1"').expect(412);
    await t.http().delete(`/scim/v2/Users/${user.id}`).set('If-Match', 'W/"2"').expect(204);
  });

  it('answers 404 for an id that names no user, numeric or not', async () => {
    for (const id of ['999999', 'abc', '0', '2147483648']) {
      expect((await scimGet(`/Users/${id}`).expect(404)).body).toEqual(scimError(404));
    }
  });
});
