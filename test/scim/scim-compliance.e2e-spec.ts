// The SCIM endpoints checked by a SCIM 2.0 implementation written elsewhere: scimmy, with its own
// RFC 7643 schema definitions and RFC 7644 message classes. Every request of the sessions below
// is built by scimmy's message classes (PatchOp, SearchRequest), and every answer is read back
// through scimmy: resources through its User (with the enterprise extension) and Group
// definitions, lists through its ListResponse, errors through its Error message, discovery through
// its ServiceProviderConfig and ResourceType definitions and its Attribute class. scimmy must
// accept each one and keep every value the service returned for the attributes both declare.
import SCIMMY from 'scimmy';
import type { Response } from 'supertest';
import { CORE_GROUP, CORE_USER, ENTERPRISE_USER, scimGet, scimSend } from '../support/scim-api.js';
import { t, useUsersApi } from '../support/users-api.js';

type Attribute = SCIMMY.Types.Attribute;
type SchemaDefinition = SCIMMY.Types.SchemaDefinition;
type Json = Record<string, unknown>;
type SearchParams = NonNullable<Parameters<SCIMMY.Messages.SearchRequest['prepare']>[0]>;
type Operation = SCIMMY.Messages.PatchOp.PatchOpOperation;

const { Messages, Schemas, Types } = SCIMMY;

// scimmy's User definition with the enterprise extension, optional as the service's User
// resource type declares it. (Jest gives this file its own copy of scimmy's singletons.)
Schemas.User.definition.extend(Schemas.EnterpriseUser.definition, false);
const USER = Schemas.User.definition;
const GROUP = Schemas.Group.definition;
const ENTERPRISE = Schemas.EnterpriseUser.definition;

const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as Json;
const isExtension = (item: Attribute | SchemaDefinition): item is SchemaDefinition =>
  item instanceof Types.SchemaDefinition;
const attributesOf = (definition: SchemaDefinition) =>
  definition.attributes.filter((item): item is Attribute => !isExtension(item));

/**
 * The part of `value` that scimmy's `attributes` declare (names matched ignoring case, RFC 7643
 * §2.1), recursing into complex values and the definition's extensions. What scimmy does not
 * declare is listed in `undeclared` as a path (`authenticationSchemes.primary`).
 */
function declaredPart(
  value: Json,
  definition: { attributes: (Attribute | SchemaDefinition)[] },
  undeclared: string[],
  prefix = '',
): Json {
  const kept: Json = {};
  for (const [key, item] of Object.entries(value)) {
    const extension = definition.attributes.find(
      (candidate): candidate is SchemaDefinition =>
        isExtension(candidate) && candidate.id.toLowerCase() === key.toLowerCase(),
    );
    if (extension) {
      kept[key] = declaredPart(item as Json, extension, undeclared, `${key}:`);
      continue;
    }
    const attribute = definition.attributes.find(
      (candidate): candidate is Attribute =>
        !isExtension(candidate) && candidate.name.toLowerCase() === key.toLowerCase(),
    );
    if (!attribute) {
      undeclared.push(`${prefix}${key}`);
      continue;
    }
    if (attribute.type !== 'complex' || item === null) {
      kept[key] = item;
      continue;
    }
    const sub = { attributes: attribute.subAttributes ?? [] };
    kept[key] = attribute.config.multiValued
      ? (item as Json[]).map((element) =>
          declaredPart(element, sub, undeclared, `${prefix}${key}.`),
        )
      : declaredPart(item as Json, sub, undeclared, `${prefix}${key}.`);
  }
  return kept;
}

const sortedSchemas = (value: Json): Json => ({
  ...value,
  ...(Array.isArray(value.schemas) ? { schemas: [...(value.schemas as string[])].sort() } : {}),
});

/**
 * Passes a resource the service answered through scimmy's definition in the outbound (response)
 * direction: scimmy must accept it, and its result must hold exactly the values the service sent
 * for every attribute scimmy declares. Answers the paths scimmy does not declare.
 */
function expectScimmyKeeps(definition: SchemaDefinition, resource: Json): string[] {
  let coerced: Json;
  try {
    coerced = plain(definition.coerce(resource, 'out'));
  } catch (error) {
    throw new Error(
      `scimmy's ${definition.name} definition rejects ${JSON.stringify(resource)}: ${String(error)}`,
      { cause: error },
    );
  }
  // scimmy gives a resource without meta (a projection, `attributes=userName`) a meta of its
  // own, holding only the resourceType it knows; the service sent none (RFC 7644 §3.4.2.5).
  if (!('meta' in resource)) {
    expect(coerced.meta).toEqual({ resourceType: definition.name });
    delete coerced.meta;
  }
  const undeclared: string[] = [];
  const expected = declaredPart(resource, definition, undeclared);
  expect(sortedSchemas(coerced)).toEqual(sortedSchemas(expected));
  return undeclared;
}

/** Checks a User or Group with scimmy; the service sends nothing scimmy's definitions lack. */
function expectResource(resource: Json): Json {
  const schemas = resource.schemas as string[];
  expect(schemas).toBeInstanceOf(Array);
  const definition = schemas.includes(CORE_GROUP) ? GROUP : USER;
  expect(expectScimmyKeeps(definition, resource)).toEqual([]);
  return resource;
}

/**
 * Reads a ListResponse the way scimmy reads one it received, then each of its resources. Its
 * header must be what the service sent, and itemsPerPage the number of resources on the page
 * (RFC 7644 §3.4.2). scimmy re-pages a received list whose Resources reach startIndex (it takes
 * them for the whole result), so pages after the first are kept shorter than their startIndex.
 */
function expectList(res: Response): Json[] {
  const body = res.body as Json;
  const parsed = plain(new Messages.ListResponse(body as never));
  expect(parsed).toEqual(body);
  const resources = body.Resources as Json[];
  expect(body.itemsPerPage).toBe(resources.length);
  resources.forEach(expectResource);
  return resources;
}

/** The keywords RFC 7644 §3.12 (Table 9) defines for a 400 response. */
const RFC_400_KEYWORDS = [
  'invalidFilter',
  'tooMany',
  'uniqueness',
  'mutability',
  'invalidSyntax',
  'invalidPath',
  'noTarget',
  'invalidValue',
  'invalidVers',
  'sensitive',
];

/**
 * Reads an error the way scimmy reads a received one (it throws it as a SCIMError), then builds
 * scimmy's own Error message from its status, scimType and detail, which checks that the status
 * is one of RFC 7644 §3.12's and the scimType one scimmy allows with it: it must equal the body.
 */
function expectError(res: Response, status: number, scimType?: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
  const body = res.body as { status: string; scimType?: string; detail?: string };
  let received: unknown;
  try {
    new Messages.ErrorResponse(body as never);
  } catch (error) {
    received = error;
  }
  expect(received).toBeInstanceOf(Types.Error);
  const { status: receivedStatus, scimType: receivedType } = received as SCIMMY.Types.SCIMError;
  expect({ status: receivedStatus, scimType: receivedType }).toEqual({
    status: String(status),
    scimType,
  });
  expect(typeof body.detail).toBe('string');
  if (status === 400) expect(RFC_400_KEYWORDS).toContain(scimType);
  const rebuilt = new Messages.ErrorResponse({
    status: Number(body.status) as SCIMMY.Messages.ErrorResponse.ValidStatusCodes,
    scimType: body.scimType as SCIMMY.Messages.ErrorResponse.ValidScimTypes | undefined,
    detail: body.detail,
  });
  expect(plain(rebuilt)).toEqual(body);
}

/** A SearchRequest built, and so checked, by scimmy, its filter parsed by scimmy's Filter. */
function searchRequest(params: SearchParams): Json {
  const prepared = plain(new Messages.SearchRequest().prepare(params));
  if (params.filter) expect(() => new Types.Filter(params.filter)).not.toThrow();
  // What the service receives: scimmy must accept it as a received SearchRequest too.
  expect(plain(new Messages.SearchRequest(prepared as never))).toEqual(prepared);
  return prepared;
}

/** The same SearchRequest as the query of a GET (RFC 7644 §3.4.2). */
function query(params: SearchParams): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(searchRequest(params))) {
    if (key !== 'schemas') search.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  return `?${search.toString()}`;
}

/** A PatchOp built, and so checked, by scimmy, as the service receives it. */
function patchOp(...operations: Operation[]): Json {
  const message = plain(
    new Messages.PatchOp({ schemas: [Messages.PatchOp.id], Operations: operations }),
  );
  expect(() => new Messages.PatchOp(message as never)).not.toThrow();
  return message;
}

/**
 * What scimmy's own PatchOp makes of `resource` (as the service answered it) after `message`:
 * the service's result must be the same, apart from meta (its new version and lastModified).
 */
async function expectPatchedAsScimmy(before: Json, message: Json, after: Json): Promise<void> {
  const instance = (before.schemas as string[]).includes(CORE_GROUP)
    ? new Schemas.Group(before, 'out')
    : new Schemas.User(before, 'out');
  const applied = plain(await new Messages.PatchOp(message as never).apply(instance));
  const withoutMeta = (resource: Json) => {
    const { schemas, ...rest } = sortedSchemas(resource);
    delete rest.meta;
    return { schemas, ...rest };
  };
  expect(withoutMeta(after)).toEqual(withoutMeta(applied));
}

const created = async (path: string, body: object) =>
  expectResource((await scimSend('post', path, body).expect(201)).body);

/** A user as a provider creates one, with the enterprise extension. */
const enterpriseUser = (
  userName: string,
  given: string,
  family: string,
  enterprise: Json = {},
) => ({
  schemas: [CORE_USER, ENTERPRISE_USER],
  externalId: `ext-${userName}`,
  userName,
  active: true,
  displayName: `${given} ${family}`,
  name: { formatted: `${given} ${family}`, givenName: given, familyName: family },
  emails: [{ value: `${userName}@example.com`, type: 'work', primary: true }],
  phoneNumbers: [{ value: '+44 20 7946 0000', type: 'work' }],
  addresses: [{ locality: 'London', country: 'GB', type: 'work', primary: true }],
  title: 'Analyst',
  userType: 'Employee',
  preferredLanguage: 'en-GB',
  locale: 'en-GB',
  timezone: 'Europe/London',
  [ENTERPRISE_USER]: {
    employeeNumber: userName.length.toString(),
    costCenter: 'CC-1',
    organization: 'Analytical Engines',
    division: 'Research',
    department: 'Engines',
    ...enterprise,
  },
});

describe('SCIM compliance, checked by scimmy (e2e)', () => {
  useUsersApi();

  it('discovery: ServiceProviderConfig and ResourceTypes pass scimmy, and every attribute of /Schemas is one scimmy can build', async () => {
    const config = (await scimGet('/ServiceProviderConfig').expect(200)).body as Json;
    // scimmy's definition has no authenticationSchemes.primary (RFC 7643 §5 lists none; its
    // example in §8.5 shows one): the only value it leaves out.
    expect(expectScimmyKeeps(Schemas.ServiceProviderConfig.definition, config)).toEqual([
      'authenticationSchemes.primary',
    ]);
    expect(() => new Schemas.ServiceProviderConfig(config)).not.toThrow();

    const types = (await scimGet('/ResourceTypes').expect(200)).body as Json;
    expect(plain(new Messages.ListResponse(types as never))).toEqual(types);
    const resourceTypes = types.Resources as Json[];
    expect(resourceTypes.map(({ id }) => id)).toEqual(['User', 'Group']);
    for (const resourceType of resourceTypes) {
      expect(expectScimmyKeeps(Schemas.ResourceType.definition, resourceType)).toEqual([]);
      expect(() => new Schemas.ResourceType(resourceType)).not.toThrow();
      const one = (await scimGet(`/ResourceTypes/${String(resourceType.id)}`).expect(200)).body;
      expect(one).toEqual(resourceType);
    }

    // scimmy has no definition of the Schema resource itself; each attribute of each schema is
    // rebuilt as a scimmy Attribute, whose constructor checks its type and characteristics.
    const schemas = (await scimGet('/Schemas').expect(200)).body as Json;
    expect(plain(new Messages.ListResponse(schemas as never))).toEqual(schemas);
    const ids = (schemas.Resources as Json[]).map(({ id }) => id);
    expect(ids).toEqual([CORE_USER, ENTERPRISE_USER, CORE_GROUP]);
    for (const schema of schemas.Resources as Json[]) {
      const rebuilt = new Types.SchemaDefinition(
        String(schema.name),
        String(schema.id),
        String(schema.description),
        (schema.attributes as Json[]).map(asScimmyAttribute),
      );
      expect(rebuilt.describe('/scim/v2/Schemas').attributes.length).toBe(
        (schema.attributes as Json[]).length,
      );
    }
  });

  it("/Schemas: every User, EnterpriseUser and Group attribute the service declares has scimmy's type and characteristics", async () => {
    const differences: string[] = [];
    const notDeclared: string[] = [];
    const unknownToScimmy: string[] = [];
    for (const definition of [USER, ENTERPRISE, GROUP]) {
      const schema = (await scimGet(`/Schemas/${definition.id}`).expect(200)).body as Json;
      expect(schema.id).toBe(definition.id);
      compareAttributes(
        schema.attributes as Json[],
        attributesOf(definition),
        `${definition.name}:`,
        { differences, notDeclared, unknownToScimmy },
      );
    }
    expect(unknownToScimmy).toEqual([]);
    console.log(`scimmy attributes the service does not declare: ${notDeclared.join(', ')}`);
    // Where the service declares an attribute otherwise than scimmy, and why each stands:
    expect(differences).toEqual([
      // These hold a resource's id, which RFC 7643 §3.1 makes case-exact; scimmy's false follows
      // the schema representation of RFC 7643 §8.7.1. The service's ids are digits, which match
      // the same values either way.
      'User:groups.value caseExact: service true, scimmy false',
      'Group:members.value caseExact: service true, scimmy false',
      // RFC 7643 §4.2 makes members' sub-attributes immutable: set by a POST or PUT, never
      // changed. The service derives display and $ref from value and declares them readOnly: what
      // a client sends is ignored (§2.2; the groups session's PUT checks it). Under either, no
      // request changes them for the same value.
      'Group:members.$ref mutability: service readOnly, scimmy immutable',
      'Group:members.display mutability: service readOnly, scimmy immutable',
    ]);
  });

  it('users: create, read, filter, page, search, PATCH, PUT and delete, every answer accepted by scimmy', async () => {
    const grace = await created('/Users', enterpriseUser('grace', 'Grace', 'Hopper'));
    const ada = await created(
      '/Users',
      enterpriseUser('ada', 'Ada', 'Lovelace', { manager: { value: grace.id } }),
    );
    const linus = await created('/Users', enterpriseUser('linus', 'Linus', 'Torvalds'));
    expect(ada).toEqual(
      expect.objectContaining({
        ...enterpriseUser('ada', 'Ada', 'Lovelace', { manager: { value: grace.id } }),
        id: expect.any(String),
      }),
    );
    expect(expectResource((await scimGet(`/Users/${String(ada.id)}`).expect(200)).body)).toEqual(
      ada,
    );

    // Lookups a provider sends, each a SearchRequest of scimmy's as a GET query.
    const ids = (resources: Json[]) => resources.map(({ id }) => id);
    const list = async (params: SearchParams) =>
      expectList(await scimGet(`/Users${query(params)}`).expect(200));
    expect(ids(await list({ filter: 'userName eq "ADA"' }))).toEqual([ada.id]);
    expect(await list({ filter: 'userName eq "nobody"' })).toEqual([]);
    expect(
      ids(
        await list({
          filter: 'emails[type eq "work" and value co "@example.com"]',
          sortBy: 'userName',
          sortOrder: 'descending',
        }),
      ),
    ).toEqual([linus.id, grace.id, ada.id]);
    expect(
      ids(await list({ filter: `${ENTERPRISE_USER}:manager.value eq "${String(grace.id)}"` })),
    ).toEqual([ada.id]);
    expect(
      ids(
        await list({
          filter: 'not (name.familyName sw "Ho") and active eq true',
          sortBy: 'name.givenName',
        }),
      ),
    ).toEqual([ada.id, linus.id]);
    // The second page of one: shorter than its startIndex (see expectList).
    const page = await scimGet(
      `/Users${query({ sortBy: 'userName', startIndex: 2, count: 1 })}`,
    ).expect(200);
    expect(ids(expectList(page))).toEqual([grace.id]);
    expect(page.body).toEqual(expect.objectContaining({ totalResults: 3, startIndex: 2 }));
    const projected = await list({ filter: 'active eq true', attributes: ['userName', 'emails'] });
    expect(projected.map((user) => Object.keys(user).sort())).toEqual(
      Array(3).fill(['emails', 'id', 'schemas', 'userName']),
    );
    const searched = await scimSend(
      'post',
      '/Users/.search',
      searchRequest({ filter: 'title eq "Analyst"', excludedAttributes: ['addresses'], count: 2 }),
    ).expect(200);
    expect(expectList(searched)).toHaveLength(2);
    expect(searched.body.totalResults).toBe(3);

    // Entra ID-like PATCH: paths, a value filter, the extension, a removal and no path at all.
    const userPatch = patchOp(
      { op: 'replace', path: 'displayName', value: 'Ada King' },
      { op: 'replace', path: 'emails[type eq "work"].value', value: 'ada@king.example' },
      { op: 'add', path: 'phoneNumbers', value: [{ value: '+44 20 7946 0001', type: 'mobile' }] },
      { op: 'replace', path: `${ENTERPRISE_USER}:department`, value: 'Analytics' },
      { op: 'remove', path: 'title' },
      { op: 'replace', value: { nickName: 'Ada', 'name.familyName': 'King', active: false } },
    );
    const patched = expectResource(
      (await scimSend('patch', `/Users/${String(ada.id)}`, userPatch).expect(200)).body,
    );
    await expectPatchedAsScimmy(ada, userPatch, patched);
    expect(patched).toEqual(
      expect.objectContaining({
        displayName: 'Ada King',
        nickName: 'Ada',
        active: false,
        name: { formatted: 'Ada Lovelace', givenName: 'Ada', familyName: 'King' },
        emails: [{ value: 'ada@king.example', type: 'work', primary: true }],
        phoneNumbers: [
          { value: '+44 20 7946 0000', type: 'work' },
          { value: '+44 20 7946 0001', type: 'mobile' },
        ],
      }),
    );
    expect(patched).not.toHaveProperty('title');
    expect(patched[ENTERPRISE_USER]).toEqual(
      expect.objectContaining({ department: 'Analytics', manager: { value: grace.id } }),
    );

    // Okta-like PUT of the whole user, at the version just read.
    const replaced = expectResource(
      (
        await scimSend('put', `/Users/${String(ada.id)}`, {
          ...enterpriseUser('ada', 'Ada', 'Lovelace'),
          id: ada.id,
          title: 'Countess',
        })
          .set('If-Match', String((patched.meta as Json).version))
          .expect(200)
      ).body,
    );
    expect(replaced).toEqual(
      expect.objectContaining({ title: 'Countess', active: true, displayName: 'Ada Lovelace' }),
    );
    expect(replaced).not.toHaveProperty('nickName');

    await t
      .http()
      .delete(`/scim/v2/Users/${String(linus.id)}`)
      .expect(204);
    expectError(await scimGet(`/Users/${String(linus.id)}`), 404);
    expect(ids(await list({ sortBy: 'meta.created' }))).toEqual([grace.id, ada.id]);
  });

  it('groups: create with members, PATCH members, list, search, PUT and delete, every answer accepted by scimmy', async () => {
    const [ada, bob, cy] = await Promise.all(
      ['ada', 'bob', 'cy'].map(async (name) =>
        String((await created('/Users', enterpriseUser(name, name, 'Example'))).id),
      ),
    );
    const group = await created('/Groups', {
      schemas: [CORE_GROUP],
      externalId: 'eng-1',
      displayName: 'Engineers',
      members: [{ value: ada }, { value: bob }],
    });
    const id = String(group.id);
    expect(group.members).toEqual([
      { value: ada, $ref: `/scim/v2/Users/${ada}`, display: 'ada Example', type: 'User' },
      { value: bob, $ref: `/scim/v2/Users/${bob}`, display: 'bob Example', type: 'User' },
    ]);
    expect(expectResource((await scimGet(`/Groups/${id}`).expect(200)).body)).toEqual(group);
    const user = expectResource((await scimGet(`/Users/${ada}`).expect(200)).body);
    expect(user.groups).toEqual([
      { value: id, $ref: `/scim/v2/Groups/${id}`, display: 'Engineers', type: 'direct' },
    ]);

    // Members added (204), then one removed through a value filter, answered with the group.
    await scimSend(
      'patch',
      `/Groups/${id}`,
      patchOp({ op: 'add', path: 'members', value: [{ value: cy }] }),
    ).expect(204);
    const beforeRemoval = expectResource((await scimGet(`/Groups/${id}`).expect(200)).body);
    const groupPatch = patchOp(
      { op: 'remove', path: `members[value eq "${bob}"]` },
      { op: 'replace', value: { displayName: 'Engines', externalId: 'eng-2' } },
    );
    const removed = expectResource(
      (await scimSend('patch', `/Groups/${id}?excludedAttributes=members`, groupPatch).expect(200))
        .body,
    );
    const afterRemoval = expectResource((await scimGet(`/Groups/${id}`).expect(200)).body);
    await expectPatchedAsScimmy(beforeRemoval, groupPatch, afterRemoval);
    expect(removed).toEqual(
      expect.objectContaining({ displayName: 'Engines', externalId: 'eng-2' }),
    );
    expect(removed).not.toHaveProperty('members');

    const list = async (params: SearchParams) =>
      expectList(await scimGet(`/Groups${query(params)}`).expect(200));
    const [withoutMembers] = await list({
      filter: 'displayName eq "engines"',
      excludedAttributes: ['members'],
    });
    expect(withoutMembers).toEqual(removed);
    const [found] = await list({ filter: `id eq "${id}" and members[value eq "${cy}"]` });
    expect((found.members as Json[]).map(({ value }) => value)).toEqual([ada, cy]);
    expect(await list({ filter: `members[value eq "${bob}"]` })).toEqual([]);
    const searched = await scimSend(
      'post',
      '/Groups/.search',
      searchRequest({ filter: 'members.display co "cy"', attributes: ['displayName'] }),
    ).expect(200);
    expect(expectList(searched)).toEqual([{ schemas: [CORE_GROUP], id, displayName: 'Engines' }]);
    // Users, then groups, from the root.
    const everything = await scimSend(
      'post',
      '/.search',
      searchRequest({ filter: 'displayName sw "Eng" or displayName eq "bob Example"', count: 10 }),
    ).expect(200);
    expect(expectList(everything).map((resource) => resource.id)).toEqual([bob, id]);

    // A whole group. The member's display and $ref, which the service derives from its value
    // and declares readOnly, are ignored when a client sends others (RFC 7643 §2.2).
    const replaced = expectResource(
      (
        await scimSend('put', `/Groups/${id}`, {
          schemas: [CORE_GROUP],
          id,
          externalId: 'eng-2',
          displayName: 'Engines',
          members: [{ value: bob, display: 'Robert', $ref: `/scim/v2/Users/${ada}`, type: 'User' }],
        }).expect(200)
      ).body,
    );
    expect(replaced.members).toEqual([
      { value: bob, display: 'bob Example', $ref: `/scim/v2/Users/${bob}`, type: 'User' },
    ]);

    await t.http().delete(`/scim/v2/Groups/${id}`).expect(204);
    expectError(await scimGet(`/Groups/${id}`), 404);
    expect(await list({})).toEqual([]);
  });

  it('errors: each is a SCIM Error message scimmy reads and would itself send', async () => {
    const ada = String((await created('/Users', enterpriseUser('ada', 'Ada', 'Lovelace'))).id);
    expectError(await scimGet('/Users/999999'), 404);
    expectError(
      await scimSend('post', '/Users', enterpriseUser('ADA', 'Ada', 'L')),
      409,
      'uniqueness',
    );
    expectError(
      await scimGet(`/Users${query({ filter: 'shoeSize gt 40' })}`),
      400,
      'invalidFilter',
    );
    expectError(await scimGet(`/Users${query({ attributes: ['shoeSize'] })}`), 400, 'invalidValue');
    expectError(
      await scimSend(
        'patch',
        `/Users/${ada}`,
        patchOp({ op: 'add', path: 'groups', value: [{ value: '1' }] }),
      ),
      400,
      'mutability',
    );
    expectError(
      await scimSend(
        'patch',
        `/Users/${ada}`,
        patchOp({ op: 'replace', path: 'shoeSize', value: '42' }),
      ),
      400,
      'invalidPath',
    );
    expectError(
      await scimSend('put', `/Users/${ada}`, enterpriseUser('ada', 'Ada', 'Lovelace')).set(
        'If-Match',
        'W/"7"',
      ),
      412,
    );
    expectError(
      await scimSend('post', '/Groups', {
        schemas: [CORE_GROUP],
        displayName: 'G',
        members: [{ value: '424242' }],
      }),
      400,
      'invalidValue',
    );
    expectError(
      await scimSend('post', '/Users', { schemas: [CORE_GROUP], userName: 'x' }),
      400,
      'invalidSyntax',
    );

    // A count above filter.maxResults is 400 tooMany. RFC 7644 §3.12 lists tooMany among the
    // keywords of a 400 (Table 9); scimmy allows it only with 413, which RFC 7644 uses for a
    // bulk request too large (§3.7.3), not as a keyword's status. So scimmy reads the error, and
    // checks the status and the keyword each on its own; the pair is checked against the RFC.
    const tooMany = await scimGet(`/Users${query({ count: 201 })}`).expect(400);
    const { detail } = tooMany.body as { detail: string };
    expect(tooMany.body).toEqual({
      schemas: [Messages.ErrorResponse.id],
      status: '400',
      scimType: 'tooMany',
      detail,
    });
    expect(() => new Messages.ErrorResponse(tooMany.body as never)).toThrow(Types.Error);
    expect(plain(new Messages.ErrorResponse({ status: 400, detail }))).toEqual({
      schemas: [Messages.ErrorResponse.id],
      status: '400',
      detail,
    });
    expect(() => new Messages.ErrorResponse({ status: 413, scimType: 'tooMany' })).not.toThrow();
    expect(() => new Messages.ErrorResponse({ status: 400, scimType: 'tooMany' })).toThrow(
      /not valid for detail error keyword 'tooMany'/,
    );
    expect(RFC_400_KEYWORDS).toContain('tooMany');
  });
});

/**
 * Compares the service's described attributes with scimmy's of the same name: type and
 * multiValued always, and mutability, caseExact and uniqueness where scimmy's description states
 * them. Lists scimmy's attributes the service does not describe, and the service's that scimmy
 * does not define.
 */
function compareAttributes(
  described: Json[],
  scimmy: Attribute[],
  prefix: string,
  found: { differences: string[]; notDeclared: string[]; unknownToScimmy: string[] },
): void {
  const named = (name: unknown) => (attribute: Attribute) =>
    attribute.name.toLowerCase() === String(name).toLowerCase();
  for (const attribute of scimmy) {
    const declared = described.some((ours) => named(ours.name)(attribute));
    if (!declared && !attribute.config.shadow) found.notDeclared.push(`${prefix}${attribute.name}`);
  }
  for (const ours of described) {
    const attribute = scimmy.find(named(ours.name));
    if (!attribute) {
      found.unknownToScimmy.push(`${prefix}${String(ours.name)}`);
      continue;
    }
    const theirs = attribute.toJSON() as unknown as Json;
    for (const characteristic of ['type', 'multiValued', 'mutability', 'caseExact', 'uniqueness']) {
      if (!(characteristic in theirs)) continue;
      if (ours[characteristic] !== theirs[characteristic]) {
        found.differences.push(
          `${prefix}${attribute.name} ${characteristic}: service ${String(ours[characteristic])}, scimmy ${String(theirs[characteristic])}`,
        );
      }
    }
    if (attribute.type === 'complex') {
      compareAttributes(
        (ours.subAttributes as Json[] | undefined) ?? [],
        attribute.subAttributes ?? [],
        `${prefix}${attribute.name}.`,
        found,
      );
    }
  }
}

/** A /Schemas attribute as a scimmy Attribute (its constructor rejects invalid characteristics). */
function asScimmyAttribute(described: Json): Attribute {
  const { name, type, subAttributes, mutability, uniqueness, returned } = described;
  return new Types.Attribute(
    type as SCIMMY.Types.Attribute.ValidAttributeTypes,
    String(name),
    {
      multiValued: described.multiValued as boolean,
      required: described.required as boolean,
      caseExact: described.caseExact as boolean,
      mutable: mutability as string,
      returned: returned as string,
      uniqueness: uniqueness as string,
      ...(described.canonicalValues
        ? { canonicalValues: described.canonicalValues as string[] }
        : {}),
      ...(described.referenceTypes ? { referenceTypes: described.referenceTypes as string[] } : {}),
      description: String(described.description),
    },
    ((subAttributes as Json[] | undefined) ?? []).map(asScimmyAttribute),
  );
}
