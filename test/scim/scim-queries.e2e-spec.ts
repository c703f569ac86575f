// SCIM discovery, queries (filter, sort, paging, attributes, .search) and refused input.
import {
  CORE_GROUP,
  CORE_USER,
  ENTERPRISE_USER,
  entraUser,
  LIST_RESPONSE,
  patchOp,
  scimError,
  scimGet,
  scimSend,
} from '../support/scim-api.js';
import { t, useUsersApi } from '../support/users-api.js';

const ids = (res: { body: { Resources: { userName: string }[] } }) =>
  res.body.Resources.map((user) => user.userName);

describe('SCIM queries and discovery (e2e)', () => {
  useUsersApi();

  async function seedThree() {
    await scimSend('post', '/Users', entraUser('ada@example.com')).expect(201);
    await scimSend('post', '/Users', {
      schemas: [CORE_USER],
      userName: 'bob',
      title: 'Engineer',
      emails: [
        { value: 'bob@home.example', type: 'home' },
        { value: 'bob@work.example', type: 'work', primary: true },
      ],
      active: false,
    }).expect(201);
    await t.http().post('/users').send({ name: 'Carol', email: 'carol@example.com' }).expect(201);
  }

  describe('discovery', () => {
    it('declares what the service does, generated from its schema', async () => {
      const config = await scimGet('/ServiceProviderConfig').expect(200);
      expect(config.body).toEqual(
        expect.objectContaining({
          patch: { supported: true },
          filter: { supported: true, maxResults: 200 },
          sort: { supported: true },
          etag: { supported: true },
          bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
          changePassword: { supported: false },
        }),
      );
      const types = await scimGet('/ResourceTypes').expect(200);
      expect(types.body.Resources.map((type: { id: string }) => type.id)).toEqual([
        'User',
        'Group',
      ]);
      await scimGet('/ResourceTypes/User').expect(200);
      const group = await scimGet('/ResourceTypes/Group').expect(200);
      expect(group.body).toEqual(
        expect.objectContaining({ endpoint: '/Groups', schema: CORE_GROUP }),
      );
      const schemas = await scimGet('/Schemas').expect(200);
      expect(schemas.body.Resources.map((schema: { id: string }) => schema.id)).toEqual([
        CORE_USER,
        ENTERPRISE_USER,
        CORE_GROUP,
      ]);
      const core = await scimGet(`/Schemas/${CORE_USER}`).expect(200);
      expect(core.body.attributes).toContainEqual(
        expect.objectContaining({
          name: 'userName',
          type: 'string',
          required: true,
          uniqueness: 'server',
          mutability: 'readWrite',
          returned: 'default',
          caseExact: false,
          multiValued: false,
        }),
      );
    });

    it.each(['/Schemas/urn:nope', '/ResourceTypes/Role', '/Nope'])(
      'answers a SCIM 404 for %s',
      async (path) => {
        const res = await scimGet(path).expect(404);
        expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
        expect(res.body).toEqual(scimError(404));
      },
    );
  });

  describe('filter', () => {
    // One seed for the whole table: each case only reads.
    const cases: [string, string[]][] = [
      ['userName eq "BOB"', ['bob']],
      ['userName ne "bob"', ['ada@example.com', 'carol@example.com']],
      ['userName sw "a" or userName ew "example.com"', ['ada@example.com', 'carol@example.com']],
      ['displayName co "love"', ['ada@example.com']],
      ['title pr', ['ada@example.com', 'bob']],
      ['not (title pr)', ['carol@example.com']],
      ['not (title eq "Engineer")', ['ada@example.com', 'carol@example.com']],
      ['active eq false', ['bob']],
      ['emails[type eq "work" and value ew "@work.example"]', ['bob']],
      ['emails.value eq "bob@home.example"', ['bob']],
      ['emails co "carol"', ['carol@example.com']],
      [`${ENTERPRISE_USER}:department eq "engines"`, ['ada@example.com']],
      ['name.givenName eq "Ada" and (active eq true or title pr)', ['ada@example.com']],
      ['meta.created gt "2000-01-01T00:00:00Z"', ['ada@example.com', 'bob', 'carol@example.com']],
      ['meta.lastModified lt "2000-01-01T00:00:00Z"', []],
      ['id eq "2"', ['bob']],
      ['externalId eq "ext-ada@example.com"', ['ada@example.com']],
      ['userName co "%"', []],
      // The look-ups providers send, read through the database's functions: the same answers.
      [`${CORE_USER}:userName eq "Ada@Example.COM"`, ['ada@example.com']],
      ['userName eq "nobody"', []],
      ['externalId eq "EXT-ADA@example.com"', []],
      ['externalId eq null', ['bob', 'carol@example.com']],
    ];

    it('selects exactly the matching users, with their exact total', async () => {
      await seedThree();
      for (const [filter, expected] of cases) {
        const res = await scimGet(`/Users?filter=${encodeURIComponent(filter)}`).expect(200);
        expect([filter, ids(res), res.body.totalResults]).toEqual([
          filter,
          expected,
          expected.length,
        ]);
      }
    });

    it.each([
      ['userName eq', 'invalidFilter'],
      ['userName zz "x"', 'invalidFilter'],
      ['password eq "x"', 'invalidFilter'],
      ['active gt true', 'invalidFilter'],
      ['meta.created gt "yesterday"', 'invalidFilter'],
      ['emails[type eq "work"', 'invalidFilter'],
      ['userName eq 5', 'invalidFilter'],
      ['externalId eq true', 'invalidFilter'],
    ])('refuses %s with 400 %s', async (filter, scimType) => {
      const res = await scimGet(`/Users?filter=${encodeURIComponent(filter)}`).expect(400);
      expect(res.body).toEqual(scimError(400, scimType));
    });
  });

  it('sorts, pages from startIndex with an exact total, and projects attributes', async () => {
    await seedThree();
    const res = await scimGet(
      '/Users?sortBy=userName&sortOrder=descending&startIndex=2&count=1&attributes=userName,emails.value',
    ).expect(200);
    expect(res.body).toEqual({
      schemas: [LIST_RESPONSE],
      totalResults: 3,
      startIndex: 2,
      itemsPerPage: 1,
      Resources: [
        {
          schemas: [CORE_USER],
          id: '2',
          userName: 'bob',
          emails: [{ value: 'bob@home.example' }, { value: 'bob@work.example' }],
        },
      ],
    });
    const none = await scimGet('/Users?count=0').expect(200);
    expect(none.body).toEqual({
      schemas: [LIST_RESPONSE],
      totalResults: 3,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });
    const excluded = await scimGet('/Users/1?excludedAttributes=emails,meta,name').expect(200);
    expect(Object.keys(excluded.body).sort()).toEqual(
      [
        'active',
        'displayName',
        'externalId',
        'id',
        'schemas',
        'title',
        'userName',
        ENTERPRISE_USER,
      ].sort(),
    );
  });

  it('pages and projects a look-up by userName or externalId like any other filter', async () => {
    await seedThree();
    const list = async (query: string) => (await scimGet(`/Users?${query}`).expect(200)).body;
    const byUserName = `filter=${encodeURIComponent('userName eq "BOB"')}`;
    expect(await list(`${byUserName}&startIndex=2`)).toEqual({
      schemas: [LIST_RESPONSE],
      totalResults: 1,
      startIndex: 2,
      itemsPerPage: 0,
      Resources: [],
    });
    expect((await list(`${byUserName}&count=0`)).totalResults).toBe(1);
    const byExternalId = `filter=${encodeURIComponent('externalId eq "ext-ada@example.com"')}`;
    expect((await list(`${byExternalId}&attributes=userName`)).Resources).toEqual([
      { schemas: [CORE_USER, ENTERPRISE_USER], id: '1', userName: 'ada@example.com' },
    ]);
  });

  it('POST /.search takes the query as a SearchRequest body, on /Users and the root', async () => {
    await seedThree();
    const search = {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
      filter: 'active eq true',
      attributes: ['userName'],
      sortBy: 'userName',
      startIndex: 1,
      count: 10,
    };
    for (const path of ['/Users/.search', '/.search']) {
      const res = await scimSend('post', path, search).expect(200);
      expect(ids(res)).toEqual(['ada@example.com', 'carol@example.com']);
    }
  });

  describe('bad input: a SCIM 400 and nothing changed', () => {
    it.each([
      ['count=100000', 'tooMany'],
      ['count=abc', 'invalidValue'],
      ['sortBy=nope', 'invalidValue'],
      ['sortOrder=up', 'invalidValue'],
      ['filter=a&filter=b', 'invalidValue'],
      // Undeclared attributes are refused even when no user is there to project.
      ['attributes=nope', 'invalidValue'],
      ['excludedAttributes=members', 'invalidValue'],
    ])('GET /Users?%s is 400 %s', async (query, scimType) => {
      expect((await scimGet(`/Users?${query}`).expect(400)).body).toEqual(scimError(400, scimType));
    });

    it.each([
      [{ schemas: [CORE_USER], userName: 'x', nickname2: 'y' }, 'invalidValue'],
      [{ schemas: [CORE_USER], userName: 'x', active: 'maybe' }, 'invalidValue'],
      [{ schemas: [CORE_USER], userName: 5 }, 'invalidValue'],
      [
        { schemas: [CORE_USER], userName: 'x', emails: [{ value: 'not an address' }] },
        'invalidValue',
      ],
      [
        {
          schemas: [CORE_USER],
          userName: 'x',
          emails: [
            { value: 'a@b.io', primary: true },
            { value: 'c@d.io', primary: true },
          ],
        },
        'invalidValue',
      ],
      [{ schemas: [CORE_USER], userName: 'x', title: 'x'.repeat(257) }, 'invalidValue'],
      [{ schemas: [CORE_USER], displayName: 'no userName' }, 'invalidValue'],
      [{ userName: 'no schemas' }, 'invalidSyntax'],
    ])('POST /Users %j is 400 %s', async (body, scimType) => {
      expect((await scimSend('post', '/Users', body).expect(400)).body).toEqual(
        scimError(400, scimType),
      );
      expect((await scimGet('/Users').expect(200)).body.totalResults).toBe(0);
    });

    it.each(['/Users', '/Groups'])(
      'POST %s with a body over BODY_LIMIT is a SCIM 413, nothing created',
      async (path) => {
        const body = { schemas: [CORE_USER], userName: 'big', title: 'x'.repeat(200_000) };
        const res = await scimSend('post', path, body).expect(413);
        expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
        expect(res.body).toEqual(scimError(413));
        expect((await scimGet(path).expect(200)).body.totalResults).toBe(0);
      },
    );

    it.each([
      [{ op: 'replace', path: 'nope', value: 1 }, 'invalidPath'],
      [{ op: 'replace', path: 'id', value: '9' }, 'mutability'],
      [{ op: 'remove' }, 'noTarget'],
      [{ op: 'move', path: 'title', value: 'x' }, 'invalidSyntax'],
      [{ op: 'replace', path: 'emails[type eq "work"', value: 'x' }, 'invalidPath'],
      [{ op: 'replace', path: 'emails[type zz "work"]', value: 'x' }, 'invalidFilter'],
      [{ op: 'replace', path: 'active', value: 'nope' }, 'invalidValue'],
    ])(
      'PATCH %j is 400 %s, and the earlier operations are not applied',
      async (operation, scimType) => {
        const { body: user } = await scimSend('post', '/Users', entraUser('ada@example.com'));
        const res = await scimSend(
          'patch',
          `/Users/${user.id}`,
          patchOp({ op: 'replace', path: 'title', value: 'Changed' }, operation),
        ).expect(400);
        expect(res.body).toEqual(scimError(400, scimType));
        expect((await scimGet(`/Users/${user.id}`).expect(200)).body).toEqual(user);
      },
    );

    it('a body in another media type is 415 and malformed JSON is 400', async () => {
      const wrongType = await t
        .http()
        .post('/scim/v2/Users')
        .set('Content-Type', 'text/plain')
        .send('x')
        .expect(415);
      expect(wrongType.body).toEqual(scimError(415));
      const malformed = await t
        .http()
        .post('/scim/v2/Users')
        .set('Content-Type', 'application/scim+json')
        .send('{')
        .expect(400);
      expect(malformed.body).toEqual(scimError(400, 'invalidSyntax'));
      expect((await scimGet('/Users').expect(200)).body.totalResults).toBe(0);
    });
  });
});
