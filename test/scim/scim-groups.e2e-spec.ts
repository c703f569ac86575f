// SCIM Groups: members are users, a user's `groups` lists its groups (read-only), and the
// request sequences Entra ID's and Okta's provisioning documentation shows for groups.
import pg from 'pg';
import {
  CORE_GROUP,
  CORE_USER,
  LIST_RESPONSE,
  patchOp,
  scimError,
  scimGet,
  scimGroup,
  scimSend,
  scimUserId,
} from '../support/scim-api.js';
import { waitFor } from '../support/service-process.js';
import { testDatabaseUrl } from '../support/test-app.js';
import { t, useUsersApi } from '../support/users-api.js';

type Member = { value: string; display?: string; type?: string; $ref?: string };

const memberValues = (body: { members?: Member[] }) =>
  (body.members ?? []).map(({ value }) => value).sort((a, b) => Number(a) - Number(b));
const groupsOfUser = async (id: string) =>
  ((await scimGet(`/Users/${id}`).expect(200)).body.groups ?? []) as Member[];
const groupTotal = async () => (await scimGet('/Groups').expect(200)).body.totalResults as number;

describe('SCIM Groups (e2e)', () => {
  useUsersApi();

  describe('create and read', () => {
    it('creates a group of users: 201, Location, ETag, and the members shown with their names', async () => {
      const ada = await scimUserId('ada');
      const bob = await scimUserId('bob');
      const res = await scimSend(
        'post',
        '/Groups',
        scimGroup('Engineers', [ada, bob], { externalId: 'eng-1' }),
      ).expect(201);
      const id = res.body.id as string;
      expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(res.headers.location).toBe(`/scim/v2/Groups/${id}`);
      expect(res.headers.etag).toBe('W/"1"');
      expect(res.body).toEqual({
        schemas: [CORE_GROUP],
        id,
        externalId: 'eng-1',
        displayName: 'Engineers',
        members: [
          { value: ada, $ref: `/scim/v2/Users/${ada}`, display: 'ada', type: 'User' },
          { value: bob, $ref: `/scim/v2/Users/${bob}`, display: 'bob', type: 'User' },
        ],
        meta: {
          resourceType: 'Group',
          created: expect.any(String),
          lastModified: expect.any(String),
          location: `/scim/v2/Groups/${id}`,
          version: 'W/"1"',
        },
      });
      expect((await scimGet(`/Groups/${id}`).expect(200)).body).toEqual(res.body);
    });

    it("lists a user's groups on the user, read-only", async () => {
      const ada = await scimUserId('ada');
      const a = (await scimSend('post', '/Groups', scimGroup('A', [ada])).expect(201)).body.id;
      const b = (await scimSend('post', '/Groups', scimGroup('B', [ada])).expect(201)).body.id;
      expect(await groupsOfUser(ada)).toEqual([
        { value: a, $ref: `/scim/v2/Groups/${a}`, display: 'A', type: 'direct' },
        { value: b, $ref: `/scim/v2/Groups/${b}`, display: 'B', type: 'direct' },
      ]);
      // A write of the user's groups is refused, or ignored in a whole resource.
      const patch = await scimSend(
        'patch',
        `/Users/${ada}`,
        patchOp({ op: 'add', path: 'groups', value: [{ value: a }] }),
      ).expect(400);
      expect(patch.body).toEqual(scimError(400, 'mutability'));
      const put = await scimSend('put', `/Users/${ada}`, {
        schemas: [CORE_USER],
        userName: 'ada',
        groups: [],
      }).expect(200);
      expect(put.body.groups).toHaveLength(2);
    });

    it.each([
      ['no displayName', { schemas: [CORE_GROUP] }, 'invalidValue'],
      ['an empty displayName', scimGroup('  '), 'invalidValue'],
      ['a displayName of 257 characters', scimGroup('x'.repeat(257)), 'invalidValue'],
      ['the User schema', { schemas: [CORE_USER], displayName: 'G' }, 'invalidSyntax'],
      ['an undeclared attribute', scimGroup('G', [], { owner: 'me' }), 'invalidValue'],
      ['a member that is not an id', scimGroup('G', ['ada']), 'invalidValue'],
      ['a member id of no user', scimGroup('G', ['424242']), 'invalidValue'],
      [
        'a member that is a group',
        { schemas: [CORE_GROUP], displayName: 'G', members: [{ value: '1', type: 'Group' }] },
        'invalidValue',
      ],
      [
        'members that are not objects',
        { schemas: [CORE_GROUP], displayName: 'G', members: ['1'] },
        'invalidValue',
      ],
    ])('refuses a group with %s: 400, nothing created', async (_, body, scimType) => {
      await scimUserId('someone');
      const res = await scimSend('post', '/Groups', body).expect(400);
      expect(res.body).toEqual(scimError(400, scimType));
      expect(await groupTotal()).toBe(0);
    });

    it('answers a SCIM 404 for a group that does not exist', async () => {
      for (const path of ['/Groups/999999', '/Groups/abc', '/Groups/0']) {
        expect((await scimGet(path).expect(404)).body).toEqual(scimError(404));
      }
      const res = await scimSend(
        'patch',
        '/Groups/999999',
        patchOp({ op: 'replace', path: 'displayName', value: 'x' }),
      ).expect(404);
      expect(res.body).toEqual(scimError(404));
      await t.http().delete('/scim/v2/Groups/999999').expect(404);
    });
  });

  describe("Entra ID's group provisioning sequence", () => {
    it('finds none, creates, adds and removes a member, renames and deletes', async () => {
      const user = await scimUserId('Test_User_dfeef4c5@testuser.com');
      // Entra ID looks the group up by name first, without its members.
      const none = await scimGet(
        '/Groups?excludedAttributes=members&filter=displayName eq "Group1DisplayName"',
      ).expect(200);
      expect(none.body).toEqual({
        schemas: [LIST_RESPONSE],
        totalResults: 0,
        startIndex: 1,
        itemsPerPage: 0,
        Resources: [],
      });
      const created = await scimSend('post', '/Groups', {
        schemas: [CORE_GROUP],
        externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
        displayName: 'displayName',
        meta: { resourceType: 'Group' },
        members: [],
      }).expect(201);
      const id = created.body.id as string;
      expect(created.body.members).toBeUndefined();

      const withoutMembers = await scimGet(`/Groups/${id}?excludedAttributes=members`).expect(200);
      expect(withoutMembers.body).toEqual(
        expect.objectContaining({ id, displayName: 'displayName' }),
      );
      expect(withoutMembers.body).not.toHaveProperty('members');

      const membership = `/Groups?filter=id eq "${id}" and members[value eq "${user}"]&excludedAttributes=members`;
      expect((await scimGet(membership).expect(200)).body.totalResults).toBe(0);
      await scimSend(
        'patch',
        `/Groups/${id}`,
        patchOp({ op: 'Add', path: 'members', value: [{ $ref: null, value: user }] }),
      ).expect(204);
      const found = await scimGet(membership).expect(200);
      expect(found.body.totalResults).toBe(1);
      expect(found.body.Resources[0]).not.toHaveProperty('members');

      // Entra ID removes a member by value, with the path `members`.
      await scimSend(
        'patch',
        `/Groups/${id}`,
        patchOp({ op: 'Remove', path: 'members', value: [{ $ref: null, value: user }] }),
      ).expect(204);
      expect((await scimGet(membership).expect(200)).body.totalResults).toBe(0);

      // A group's PATCH answers 204 with the new ETag, or the resource when attributes are asked.
      const renamed = await scimSend(
        'patch',
        `/Groups/${id}`,
        patchOp({ op: 'Replace', path: 'displayName', value: '1879db59updatedDisplayName' }),
      ).expect(204);
      expect(renamed.text).toBe('');
      expect(renamed.headers.etag).toBe('W/"4"');
      const asked = await scimSend(
        'patch',
        `/Groups/${id}?excludedAttributes=members`,
        patchOp({ op: 'Replace', path: 'externalId', value: 'x-2' }),
      ).expect(200);
      expect(asked.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(asked.body).toEqual(
        expect.objectContaining({ displayName: '1879db59updatedDisplayName', externalId: 'x-2' }),
      );
      expect(asked.headers.etag).toBe(asked.body.meta.version);

      await t.http().delete(`/scim/v2/Groups/${id}`).expect(204);
      await scimGet(`/Groups/${id}`).expect(404);
    });
  });

  describe("Okta's group push sequence", () => {
    it('creates, renames without a path, adds, removes by a value filter, replaces whole', async () => {
      const ada = await scimUserId('ada@example.com');
      const bob = await scimUserId('bob@example.com');
      const created = await scimSend('post', '/Groups', {
        schemas: [CORE_GROUP],
        displayName: 'Test SCIMv2',
        members: [],
      }).expect(201);
      const id = created.body.id as string;
      // Okta sends the id back in a PATCH without a path: a read-only attribute, ignored.
      await scimSend(
        'patch',
        `/Groups/${id}`,
        patchOp({ op: 'replace', value: { id, displayName: 'Test SCIMv2 renamed' } }),
      ).expect(204);
      const renamed = await scimGet(`/Groups/${id}`).expect(200);
      expect(renamed.body).toEqual(
        expect.objectContaining({ id, displayName: 'Test SCIMv2 renamed' }),
      );
      const added = await scimSend(
        'patch',
        `/Groups/${id}?attributes=members`,
        patchOp({
          op: 'add',
          path: 'members',
          value: [
            { value: ada, display: 'ada@example.com' },
            { value: bob, display: 'bob@example.com' },
          ],
        }),
      ).expect(200);
      expect(memberValues(added.body)).toEqual([ada, bob]);
      const removed = await scimSend(
        'patch',
        `/Groups/${id}?attributes=members`,
        patchOp({ op: 'remove', path: `members[value eq "${ada}"]` }),
      ).expect(200);
      expect(memberValues(removed.body)).toEqual([bob]);

      const replaced = await scimSend('put', `/Groups/${id}`, {
        schemas: [CORE_GROUP],
        id,
        displayName: 'Test SCIMv2',
        members: [{ value: ada, display: 'ada@example.com' }],
      }).expect(200);
      expect(replaced.body.displayName).toBe('Test SCIMv2');
      expect(memberValues(replaced.body)).toEqual([ada]);

      const page = await scimGet('/Groups?startIndex=1&count=100').expect(200);
      expect(page.body.totalResults).toBe(1);
      const byName = await scimGet('/Groups?filter=displayName eq "test scimv2"').expect(200);
      expect(byName.body.Resources.map((group: { id: string }) => group.id)).toEqual([id]);
    });
  });

  describe('members', () => {
    it('applies member changes sent at once, each of them: none undoes another', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(await scimUserId(`user-${i}`));
      const group = (await scimSend('post', '/Groups', scimGroup('Everyone')).expect(201)).body;
      const answers = await Promise.all(
        ids.map((value) =>
          scimSend(
            'patch',
            `/Groups/${group.id}`,
            patchOp({ op: 'add', path: 'members', value: [{ value }] }),
          ),
        ),
      );
      expect(answers.map(({ status }) => status)).toEqual(ids.map(() => 204));
      const read = await scimGet(`/Groups/${group.id}`).expect(200);
      expect(memberValues(read.body)).toEqual(ids);
      // Each change moved the version on once: 1 + 12.
      expect(read.body.meta.version).toBe('W/"13"');
    });

    it('queues member changes of one group in the service: one connection waits on its lock', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await scimUserId(`queued-${i}`));
      const group = (await scimSend('post', '/Groups', scimGroup('Busy')).expect(201)).body;
      const blocker = new pg.Client({ connectionString: testDatabaseUrl() });
      const admin = new pg.Client({ connectionString: testDatabaseUrl() });
      await Promise.all([blocker.connect(), admin.connect()]);
      const waiting = async () =>
        (
          await admin.query(
            // Blocked by the blocker, or queued behind another waiter for the row.
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE application_name = 'users-service' AND cardinality(pg_blocking_pids(pid)) > 0`,
          )
        ).rows[0].n as number;
      try {
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM groups WHERE id = $1 FOR UPDATE', [Number(group.id)]);
        const patches = ids.map((value) =>
          scimSend(
            'patch',
            `/Groups/${group.id}`,
            patchOp({ op: 'add', path: 'members', value: [{ value }] }),
          ).then((res) => res.status),
        );
        await waitFor('a member change waiting on the group', async () => (await waiting()) >= 1);
        // Another request is served meanwhile: the pool is not held by the queue.
        await scimGet(`/Users/${ids[0]}`).expect(200);
        expect(await waiting()).toBe(1);
        await blocker.query('COMMIT');
        expect(await Promise.all(patches)).toEqual(ids.map(() => 204));
      } finally {
        await blocker.end();
        await admin.end();
      }
      expect(memberValues((await scimGet(`/Groups/${group.id}`).expect(200)).body)).toEqual(ids);
    });

    it('replaces, removes all, and adds a member already in without a duplicate', async () => {
      const [a, b, c] = [await scimUserId('a'), await scimUserId('b'), await scimUserId('c')];
      const id = (await scimSend('post', '/Groups', scimGroup('G', [a, b])).expect(201)).body.id;
      const send = (...operations: object[]) =>
        scimSend('patch', `/Groups/${id}?attributes=members`, patchOp(...operations)).expect(200);
      expect(
        memberValues((await send({ op: 'add', path: 'members', value: [{ value: a }] })).body),
      ).toEqual([a, b]);
      expect(
        memberValues((await send({ op: 'replace', path: 'members', value: [{ value: c }] })).body),
      ).toEqual([c]);
      expect(memberValues((await send({ op: 'remove', path: 'members' })).body)).toEqual([]);
      expect(
        memberValues(
          (await send({ op: 'add', value: { members: [{ value: a }, { value: b }] } })).body,
        ),
      ).toEqual([a, b]);
      expect(
        memberValues(
          (await send({ op: 'remove', path: `members[value eq "${a}" or value eq "${b}"]` })).body,
        ),
      ).toEqual([]);
    });

    it('applies all the operations of a PATCH or none: an unknown member changes nothing', async () => {
      const a = await scimUserId('a');
      const created = (await scimSend('post', '/Groups', scimGroup('G', [a])).expect(201)).body;
      const res = await scimSend(
        'patch',
        `/Groups/${created.id}`,
        patchOp(
          { op: 'replace', path: 'displayName', value: 'Renamed' },
          { op: 'remove', path: 'members' },
          { op: 'add', path: 'members', value: [{ value: '424242' }] },
        ),
      ).expect(400);
      expect(res.body).toEqual(scimError(400, 'invalidValue'));
      expect((await scimGet(`/Groups/${created.id}`).expect(200)).body).toEqual(created);
    });

    it.each([
      ['a member attribute', { op: 'replace', path: 'members.value', value: '1' }, 'mutability'],
      ['the id', { op: 'replace', path: 'id', value: '7' }, 'mutability'],
      ['meta', { op: 'replace', path: 'meta.version', value: 'W/"9"' }, 'mutability'],
      ['displayName away', { op: 'remove', path: 'displayName' }, 'invalidValue'],
      ['an undeclared path', { op: 'add', path: 'owner', value: 'me' }, 'invalidPath'],
      [
        'a filter that adds',
        { op: 'add', path: 'members[value eq "1"]', value: { value: '1' } },
        'invalidPath',
      ],
      ['a broken filter', { op: 'remove', path: 'members[value eq]' }, 'invalidFilter'],
      [
        'a member that is not an id',
        { op: 'add', path: 'members', value: [{ value: 'x' }] },
        'invalidValue',
      ],
    ])('refuses a PATCH of %s: 400, nothing changed', async (_, operation, scimType) => {
      const created = (await scimSend('post', '/Groups', scimGroup('G')).expect(201)).body;
      const res = await scimSend('patch', `/Groups/${created.id}`, patchOp(operation)).expect(400);
      expect(res.body).toEqual(scimError(400, scimType));
      expect((await scimGet(`/Groups/${created.id}`).expect(200)).body).toEqual(created);
    });

    it('refuses a PATCH asking for an undeclared attribute before it writes anything', async () => {
      const created = (await scimSend('post', '/Groups', scimGroup('G')).expect(201)).body;
      const res = await scimSend(
        'patch',
        `/Groups/${created.id}?attributes=userName`,
        patchOp({ op: 'replace', path: 'displayName', value: 'Renamed' }),
      ).expect(400);
      expect(res.body).toEqual(scimError(400, 'invalidValue'));
      expect((await scimGet(`/Groups/${created.id}`).expect(200)).body).toEqual(created);
    });

    it('loses a deleted user from every group, and a deleted group from every user', async () => {
      const [a, b] = [await scimUserId('a'), await scimUserId('b')];
      const g1 = (await scimSend('post', '/Groups', scimGroup('G1', [a, b])).expect(201)).body.id;
      const g2 = (await scimSend('post', '/Groups', scimGroup('G2', [b])).expect(201)).body.id;
      await t.http().delete(`/scim/v2/Users/${a}`).expect(204);
      expect(memberValues((await scimGet(`/Groups/${g1}`).expect(200)).body)).toEqual([b]);
      await t.http().delete(`/scim/v2/Groups/${g1}`).expect(204);
      expect((await groupsOfUser(b)).map(({ value }) => value)).toEqual([g2]);
      // A REST delete is the same delete.
      await t.http().delete(`/users/${b}`).expect(204);
      expect((await scimGet(`/Groups/${g2}`).expect(200)).body.members).toBeUndefined();
    });
  });

  describe('If-Match', () => {
    it('writes only at the version given: 412 on a stale one, nothing changed', async () => {
      const created = (await scimSend('post', '/Groups', scimGroup('G')).expect(201)).body;
      const rename = (name: string, etag: string) =>
        scimSend(
          'patch',
          `/Groups/${created.id}`,
          patchOp({ op: 'replace', path: 'displayName', value: name }),
        ).set('If-Match', etag);
      const renamed = await rename('G2', 'W/"1"').expect(204);
      expect(renamed.headers.etag).toBe('W/"2"');
      expect((await rename('G3', 'W/"1"').expect(412)).body).toEqual(scimError(412));
      const put = await scimSend('put', `/Groups/${created.id}`, scimGroup('G4')).set(
        'If-Match',
        'W/"1"',
      );
      expect(put.status).toBe(412);
      await t.http().delete(`/scim/v2/Groups/${created.id}`).set('If-Match', 'W/"1"').expect(412);
      expect((await scimGet(`/Groups/${created.id}`).expect(200)).body.displayName).toBe('G2');
      await t.http().delete(`/scim/v2/Groups/${created.id}`).set('If-Match', 'W/"2"').expect(204);
    });
  });

  describe('If-None-Match', () => {
    it('answers 304 for a GET of a user or a group at the version the caller has', async () => {
      const user = await scimUserId('ada');
      const group = (await scimSend('post', '/Groups', scimGroup('G', [user])).expect(201)).body;
      for (const path of [`/Users/${user}`, `/Groups/${group.id}`]) {
        const first = await scimGet(path).expect(200);
        const again = await scimGet(path).set('If-None-Match', first.headers.etag).expect(304);
        expect([again.text, again.headers.etag]).toEqual(['', first.headers.etag]);
        await scimGet(path).set('If-None-Match', 'W/"999"').expect(200);
      }
      // A change of the group's members is a new version: the old tag no longer matches.
      await scimSend(
        'patch',
        `/Groups/${group.id}`,
        patchOp({ op: 'remove', path: 'members' }),
      ).expect(204);
      await scimGet(`/Groups/${group.id}`).set('If-None-Match', group.meta.version).expect(200);
    });
  });

  describe('queries', () => {
    async function seed() {
      const [a, b] = [await scimUserId('a'), await scimUserId('b')];
      const names = ['Sales', 'engineering', 'Support'];
      const ids: Record<string, string> = {};
      for (const [index, name] of names.entries()) {
        const members = [[a], [a, b], []][index];
        ids[name] = (
          await scimSend(
            'post',
            '/Groups',
            scimGroup(name, members, { externalId: `x-${index}` }),
          ).expect(201)
        ).body.id;
      }
      return { a, b, ids };
    }

    it('filters on every declared attribute, sorts and pages, and counts exactly', async () => {
      const { a, b, ids } = await seed();
      const names = async (query: string) =>
        (await scimGet(`/Groups?${query}`).expect(200)).body.Resources.map(
          (group: { displayName: string }) => group.displayName,
        );
      expect(await names('filter=displayName sw "s"&sortBy=displayName')).toEqual([
        'Sales',
        'Support',
      ]);
      expect(await names('filter=externalId eq "x-1"')).toEqual(['engineering']);
      expect(await names('filter=externalId eq "X-1"')).toEqual([]);
      expect(await names(`filter=members[value eq "${b}"]`)).toEqual(['engineering']);
      expect(
        await names(`filter=members.value eq "${a}"&sortBy=displayName&sortOrder=descending`),
      ).toEqual(['Sales', 'engineering']);
      expect(await names('filter=members.display eq "B"')).toEqual(['engineering']);
      expect(await names('filter=not (members pr)')).toEqual(['Support']);
      expect(await names(`filter=id eq "${ids.Sales}" or meta.resourceType eq "Nope"`)).toEqual([
        'Sales',
      ]);
      expect(
        await names('filter=meta.created ge "2000-01-01T00:00:00Z"&sortBy=displayName'),
      ).toEqual(['engineering', 'Sales', 'Support']);
      const page = await scimGet('/Groups?sortBy=displayName&startIndex=2&count=1').expect(200);
      expect(page.body).toEqual(
        expect.objectContaining({ totalResults: 3, startIndex: 2, itemsPerPage: 1 }),
      );
      expect(
        page.body.Resources.map((group: { displayName: string }) => group.displayName),
      ).toEqual(['Sales']);
      const only = await scimGet(
        '/Groups?attributes=displayName&filter=displayName eq "Sales"',
      ).expect(200);
      expect(only.body.Resources).toEqual([
        { schemas: [CORE_GROUP], id: ids.Sales, displayName: 'Sales' },
      ]);
    });

    it('finds users by their groups', async () => {
      const { b, ids } = await seed();
      const users = async (filter: string) =>
        (
          await scimGet(`/Users?filter=${encodeURIComponent(filter)}`).expect(200)
        ).body.Resources.map((user: { id: string }) => user.id);
      expect(await users(`groups[value eq "${ids.engineering}"] and userName eq "b"`)).toEqual([b]);
      expect(await users('groups.display eq "ENGINEERING"')).toHaveLength(2);
      expect(await users('not (groups pr)')).toEqual([]);
    });

    it.each([
      ['filter=userName eq "a"', 'invalidFilter'],
      ['filter=members.nope eq "a"', 'invalidFilter'],
      ['filter=displayName gt 3', 'invalidFilter'],
      ['sortBy=members', 'invalidValue'],
      ['count=201', 'tooMany'],
      ['attributes=userName', 'invalidValue'],
    ])('refuses %s: 400 %s', async (query, scimType) => {
      const res = await scimGet(`/Groups?${query}`).expect(400);
      expect(res.body).toEqual(scimError(400, scimType));
    });

    it('searches groups with POST /Groups/.search, and users and groups with POST /.search', async () => {
      const { a, ids } = await seed();
      const search = (path: string, body: object) =>
        scimSend('post', path, {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
          ...body,
        }).expect(200);
      const groups = await search('/Groups/.search', {
        filter: 'displayName co "e"',
        sortBy: 'displayName',
      });
      expect(groups.body.totalResults).toBe(2);
      expect(groups.body.Resources.map((g: { displayName: string }) => g.displayName)).toEqual([
        'engineering',
        'Sales',
      ]);
      // The root: users first, then groups; an attribute only users have leaves groups out.
      const both = await search('/.search', { filter: 'meta.created pr', count: 3, startIndex: 2 });
      expect(both.body.totalResults).toBe(5);
      expect(
        both.body.Resources.map((r: { meta: { resourceType: string } }) => r.meta.resourceType),
      ).toEqual(['User', 'Group', 'Group']);
      const usersOnly = await search('/.search', { filter: 'userName eq "a"' });
      expect(usersOnly.body.totalResults).toBe(1);
      // externalId is common to both: a user's look-up function and the groups' condition, each
      // comparing exactly.
      await scimSend(
        'patch',
        `/Users/${a}`,
        patchOp({ op: 'add', path: 'externalId', value: 'x-1' }),
      ).expect(200);
      const byExternalId = await search('/.search', { filter: 'externalId eq "x-1"' });
      expect([
        byExternalId.body.totalResults,
        byExternalId.body.Resources.map((r: { id: string; meta: { resourceType: string } }) => [
          r.meta.resourceType,
          r.id,
        ]),
      ]).toEqual([
        2,
        [
          ['User', a],
          ['Group', ids.engineering],
        ],
      ]);
      expect((await search('/.search', { filter: 'externalId eq "X-1"' })).body.totalResults).toBe(
        0,
      );
      const neither = await scimSend('post', '/.search', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
        filter: 'nope eq "x"',
      }).expect(400);
      expect(neither.body).toEqual(scimError(400, 'invalidFilter'));
    });
  });
});
