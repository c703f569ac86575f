// The request sequences identity providers document for their SCIM provisioning: Entra ID
// (learn.microsoft.com, "Tutorial: Develop and plan provisioning for a SCIM endpoint") and Okta
// (developer.okta.com, "SCIM 2.0 protocol reference"), replayed step by step.
import {
  CORE_USER,
  ENTERPRISE_USER,
  entraUser,
  LIST_RESPONSE,
  patchOp,
  scimError,
  scimGet,
  scimSend,
  SCIM_TYPE,
} from '../support/scim-api.js';
import { t, useUsersApi } from '../support/users-api.js';

const emptyList = {
  schemas: [LIST_RESPONSE],
  totalResults: 0,
  startIndex: 1,
  itemsPerPage: 0,
  Resources: [],
};

describe('SCIM provisioning sequences (e2e)', () => {
  useUsersApi();

  it('Entra ID: filter by userName finds nothing, then create, then read back', async () => {
    const lookup = await scimGet('/Users?filter=userName eq "ada@example.com"').expect(200);
    expect(lookup.headers['content-type']).toBe(`${SCIM_TYPE}; charset=utf-8`);
    expect(lookup.body).toEqual(emptyList);

    const created = await scimSend('post', '/Users', entraUser('ada@example.com')).expect(201);
    const id = created.body.id as string;
    expect(created.headers.location).toBe(`/scim/v2/Users/${id}`);
    expect(created.headers.etag).toBe('W/"1"');
    expect(created.body).toEqual({
      ...entraUser('ada@example.com'),
      id,
      meta: {
        resourceType: 'User',
        created: expect.any(String),
        lastModified: expect.any(String),
        location: `/scim/v2/Users/${id}`,
        version: 'W/"1"',
      },
    });
    // The same user over REST: displayName is its name, the primary email its email.
    const rest = await t.http().get(`/users/${id}`).expect(200);
    expect(rest.body).toEqual(
      expect.objectContaining({ name: 'Ada Lovelace', email: 'ada@example.com', active: true }),
    );
    const found = await scimGet('/Users?filter=userName eq "ADA@example.com"').expect(200);
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0]).toEqual(created.body);
    const byExternalId = await scimGet(`/Users?filter=externalId eq "ext-ada@example.com"`);
    expect(byExternalId.body.Resources.map((user: { id: string }) => user.id)).toEqual([id]);
  });

  it('Entra ID: PATCH Replace of several attributes, and active "False"', async () => {
    const { body: user } = await scimSend('post', '/Users', entraUser('ada@example.com'));
    const res = await scimSend(
      'patch',
      `/Users/${user.id}`,
      patchOp(
        { op: 'Replace', path: 'displayName', value: 'Ada King' },
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'ada@king.example' },
        { op: 'Replace', path: 'name.familyName', value: 'King' },
        { op: 'Replace', path: `${ENTERPRISE_USER}:department`, value: 'Analytics' },
        { op: 'Add', path: 'phoneNumbers[type eq "mobile"].value', value: '+44 20 7946 0000' },
        { op: 'Replace', path: 'active', value: 'False' },
      ),
    ).expect(200);
    expect(res.headers.etag).toBe('W/"2"');
    expect(res.body).toEqual(
      expect.objectContaining({
        displayName: 'Ada King',
        active: false,
        emails: [{ primary: true, type: 'work', value: 'ada@king.example' }],
        name: { formatted: 'Ada Lovelace', familyName: 'King', givenName: 'Ada' },
        phoneNumbers: [{ type: 'mobile', value: '+44 20 7946 0000' }],
        [ENTERPRISE_USER]: { employeeNumber: '1815', department: 'Analytics' },
      }),
    );
    const rest = await t.http().get(`/users/${user.id}`).expect(200);
    expect(rest.body).toEqual(
      expect.objectContaining({ name: 'Ada King', email: 'ada@king.example', active: false }),
    );
    const inactive = await t.http().get('/users?active=false').expect(200);
    expect(inactive.body.map((u: { id: number }) => String(u.id))).toEqual([user.id]);
  });

  it('Okta: lookup, create, deactivate with PUT active=false, then read the inactive user', async () => {
    await scimGet('/Users?filter=userName eq "grace@example.com"&startIndex=1&count=100').expect(
      200,
      emptyList,
    );
    const okta = {
      schemas: [CORE_USER],
      userName: 'grace@example.com',
      name: { givenName: 'Grace', familyName: 'Hopper' },
      emails: [{ primary: true, value: 'grace@example.com', type: 'work' }],
      displayName: 'Grace Hopper',
      locale: 'en-US',
      externalId: '00u1',
      active: true,
    };
    const { body: created } = await scimSend('post', '/Users', okta).expect(201);
    const replaced = await scimSend('put', `/Users/${created.id}`, {
      ...okta,
      id: created.id,
      active: false,
    })
      .set('If-Match', created.meta.version)
      .expect(200);
    expect(replaced.body).toEqual(expect.objectContaining({ ...okta, active: false }));
    // The old ETag no longer matches: 412, and nothing changes.
    const stale = await scimSend('put', `/Users/${created.id}`, okta)
      .set('If-Match', created.meta.version)
      .expect(412);
    expect(stale.body).toEqual(scimError(412));
    const read = await scimGet(`/Users/${created.id}`).expect(200);
    expect(read.body.active).toBe(false);
    expect(read.headers.etag).toBe(replaced.headers.etag);
  });

  it('delete: 204, then the user is gone for SCIM and REST, and a second delete is 404', async () => {
    const { body: user } = await scimSend('post', '/Users', entraUser('ada@example.com'));
    await t.http().delete(`/scim/v2/Users/${user.id}`).expect(204);
    expect((await scimGet(`/Users/${user.id}`).expect(404)).body).toEqual(scimError(404));
    await t.http().get(`/users/${user.id}`).expect(404);
    await t.http().delete(`/scim/v2/Users/${user.id}`).expect(404);
  });

  it('a duplicate userName (any case) or email is 409 uniqueness, and nothing is created', async () => {
    await scimSend('post', '/Users', entraUser('ada@example.com')).expect(201);
    const sameName = await scimSend('post', '/Users', entraUser('ADA@example.com')).expect(409);
    expect(sameName.body).toEqual(scimError(409, 'uniqueness'));
    const sameEmail = await scimSend('post', '/Users', {
      ...entraUser('other'),
      emails: [{ value: 'Ada@Example.com' }],
    }).expect(409);
    expect(sameEmail.body).toEqual(scimError(409, 'uniqueness'));
    expect((await scimGet('/Users').expect(200)).body.totalResults).toBe(1);
  });

  it('a REST user has a userName (its email, else user-<id>) and a change event per SCIM write', async () => {
    const ada = await t.http().post('/users').send({ name: 'Ada', email: 'ada@example.com' });
    const bob = await t.http().post('/users').send({ name: 'Bob' });
    const list = await scimGet('/Users?sortBy=userName&attributes=userName').expect(200);
    expect(list.body.Resources).toEqual([
      { schemas: [CORE_USER], id: String(ada.body.id), userName: 'ada@example.com' },
      { schemas: [CORE_USER], id: String(bob.body.id), userName: `user-${bob.body.id}` },
    ]);
    await scimSend(
      'patch',
      `/Users/${bob.body.id}`,
      patchOp({ op: 'replace', path: 'active', value: false }),
    ).expect(200);
    const feed = await t.http().get('/users/changes').expect(200);
    expect(feed.body.events.map((event: { data: object }) => event.data)).toEqual([
      { id: ada.body.id, version: 1, changed: ['name', 'email', 'role'] },
      { id: bob.body.id, version: 1, changed: ['name', 'email', 'role'] },
      { id: bob.body.id, version: 2, changed: ['active'] },
    ]);
  });
});
