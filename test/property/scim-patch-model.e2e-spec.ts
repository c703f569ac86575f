// Property-based, model-checked: random valid SCIM Users and random PATCH sequences, applied through
// the running service and through an in-memory model of RFC 7644 §3.5.2 and docs/provisioning.md
// written here (independent of src/scim), give the same resource. After every PATCH the answer,
// GET /scim/v2/Users/<id> and the REST user (/users/<id>: name, email, active) must equal the
// model; a PATCH with one invalid operation must be a 400 that changes nothing (all or nothing).
//
// The model states what the RFC and the documentation decide, and the generators stay inside it:
//   - a singular attribute set by `add` or `replace` (path or no path) takes the value; a complex
//     one (`name`) written without a path keeps the sub-attributes not written (§3.5.2.1, §3.5.2.3);
//   - `remove` of a singular attribute unassigns it; an emptied `name` or list is unassigned;
//   - `add` onto a multi-valued attribute appends, `replace` of it without a filter replaces the
//     whole list; a value written with `primary: true` makes it the only primary (RFC 7643 §2.4,
//     "a single primary is kept: the one just written");
//   - `remove` through a value filter removes the matched elements; `replace` of a sub-attribute
//     through a value filter sets it on every matched element, and adds the element the filter
//     describes when none matches (docs/provisioning.md, what Entra ID relies on);
//   - booleans may come as "True"/"False" (Entra ID) and read back as booleans;
//   - displayName is the REST name: without one, a new user's name is its given and family names,
//     else its userName; the REST email is the primary email's value (or the only email's).
// Left out because the RFC leaves them open or the service's rule is not documented: `remove` of an
// attribute that is unassigned or of a filter that matches nothing (dropped from the PATCH when the
// model says so), two primaries written in one operation, `primary: false`, empty strings and
// `null` values. An invalid value is the PATCH's last operation: the service validates the result
// as a whole (docs/provisioning.md), so one that a later operation overwrites is accepted.
// The model counts the cases it decided (COVERED); 40 runs must reach each of them.
//
// The second property sends the value filters with `type` in another case (`emails[TYPE eq
// "work"]`): RFC 7644 §3.4.2.2 makes attribute names in filters case-insensitive. It fails while
// the service matches a PATCH value filter's attribute name case-sensitively (appending an element
// instead of replacing the matched one's value, removing nothing).
//
// Seeded like the other property tests: FUZZ_SEED and FUZZ_RUNS (40 runs by default).
//   FUZZ_SEED=123 FUZZ_RUNS=200 npx jest test/property/scim-patch-model.e2e-spec.ts
import fc from 'fast-check';
import { CORE_USER, ENTERPRISE_USER, patchOp, scimGet, scimSend } from '../support/scim-api.js';
import { t, useUsersApi } from '../support/users-api.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261129);
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
/** fast-check stops a property (a failure) after this long; 40 runs take about 3 s. */
const BUDGET_MS = Math.max(25_000, RUNS * 600);

type Obj = Record<string, unknown>;
interface Element {
  value: string;
  type?: string;
  primary?: true;
}
type ListName = 'emails' | 'phoneNumbers';

// ---------------------------------------------------------------------------------------------
// Generators: seeds of resources and operations. Email values are made unique at run time (the
// REST email is unique across users), from a tag and a counter.
// ---------------------------------------------------------------------------------------------

const codePoints = (text: string) => [...text].length;
/** Any storable text (no NUL, well-formed), 1 to 8 graphemes. */
const text = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 8 })
  .filter((s) => !s.includes('\u0000') && codePoints(s) <= 64);
/** Text that trimming leaves as it is: the REST name is trimmed, and derived from these. */
const cleanText = text.filter((s) => s.trim() === s);
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

/** A word in random case: "replace", "Replace", "rEPLACE"… (op names, attribute names). */
const anyCase = (word: string) =>
  fc
    .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) =>
      [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''),
    );

interface ElementSeed {
  /** Email: a tag of the unique address made at run time; phone: the number itself. */
  seed: string;
  type: string;
  primary?: true;
}
const EMAIL_TYPES = ['work', 'home', 'other'];
const PHONE_TYPES = ['work', 'home', 'mobile'];
const emailTag = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/);
const phoneNumber = fc.stringMatching(/^\+[1-9][0-9]{0,2} [0-9]{3} [0-9]{4}$/);

/** 0..max elements of a list, at most one of them primary. */
function elementSeeds(list: ListName, minLength: number, maxLength: number) {
  const element = fc.record({
    seed: list === 'emails' ? emailTag : phoneNumber,
    type: fc.constantFrom(...(list === 'emails' ? EMAIL_TYPES : PHONE_TYPES)),
  });
  return fc
    .tuple(fc.array(element, { minLength, maxLength }), fc.option(fc.nat({ max: maxLength - 1 })))
    .map(([items, primary]): ElementSeed[] =>
      items.map((item, index) => (index === primary ? { ...item, primary: true } : item)),
    );
}

const resourceSeed = fc.record({
  withEnterpriseSchema: fc.boolean(),
  displayName: optional(cleanText),
  givenName: optional(cleanText),
  familyName: optional(cleanText),
  title: optional(text),
  nickName: optional(text),
  active: fc.boolean(),
  externalId: optional(text),
  emails: elementSeeds('emails', 0, 3),
  phoneNumbers: elementSeeds('phoneNumbers', 0, 2),
  enterprise: fc.oneof(
    fc.record({ department: text }),
    fc.record({ costCenter: text }),
    fc.record({ department: text, costCenter: text }),
  ),
});
type ResourceSeed = typeof resourceSeed extends fc.Arbitrary<infer T> ? T : never;

const SINGULAR_PATHS = [
  'title',
  'nickName',
  'displayName',
  'name.givenName',
  'name.familyName',
  `${ENTERPRISE_USER}:department`,
] as const;
type SingularPath = (typeof SINGULAR_PATHS)[number];
const REMOVABLE_PATHS = ['title', 'nickName', 'name.givenName', 'name.familyName'] as const;
type RemovablePath = (typeof REMOVABLE_PATHS)[number];
type ActiveValue = boolean | 'True' | 'False';
const activeValue = fc.constantFrom<ActiveValue>(true, false, 'True', 'False');

/** The attribute part of a path in random case (RFC 7643 §2.1), the schema URN as it is. */
const pathInAnyCase = (path: string) => {
  const urn = path.startsWith(`${ENTERPRISE_USER}:`) ? `${ENTERPRISE_USER}:` : '';
  return anyCase(path.slice(urn.length)).map((rest) => urn + rest);
};

const valueFor = (path: SingularPath) =>
  path === 'displayName' || path.startsWith('name.') ? cleanText : text;

type OpSeed =
  | { kind: 'set'; op: string; path: SingularPath; sentPath: string; value: string }
  | { kind: 'active'; op: string; sentPath: string; value: ActiveValue }
  | { kind: 'unset'; op: string; path: RemovablePath; sentPath: string }
  | { kind: 'list'; op: string; list: ListName; sentPath: string; items: ElementSeed[] }
  | { kind: 'removeWhere'; op: string; list: ListName; filterAttribute: string; type: string }
  | { kind: 'replaceValueWhere'; op: string; filterAttribute: string; type: string; seed: string }
  | {
      kind: 'noPath';
      op: string;
      fields: {
        displayName?: string;
        title?: string;
        nickName?: string;
        active?: ActiveValue;
        name?: { givenName?: string; familyName?: string };
        department?: string;
        /** The department as Entra ID sends it: `urn:…:User:department` as a key. */
        departmentAsUrnKey: boolean;
        emails?: ElementSeed[];
      };
    };

const addOrReplace = fc.constantFrom('add', 'replace').chain(anyCase);

const setOp: fc.Arbitrary<OpSeed> = fc.constantFrom(...SINGULAR_PATHS).chain((path) =>
  fc.record({
    kind: fc.constant('set' as const),
    op: addOrReplace,
    path: fc.constant(path),
    sentPath: pathInAnyCase(path),
    value: valueFor(path),
  }),
);
const activeOp: fc.Arbitrary<OpSeed> = fc.record({
  kind: fc.constant('active' as const),
  op: addOrReplace,
  sentPath: anyCase('active'),
  value: activeValue,
});
const unsetOp: fc.Arbitrary<OpSeed> = fc.constantFrom(...REMOVABLE_PATHS).chain((path) =>
  fc.record({
    kind: fc.constant('unset' as const),
    op: anyCase('remove'),
    path: fc.constant(path),
    sentPath: pathInAnyCase(path),
  }),
);
const listOp: fc.Arbitrary<OpSeed> = fc
  .constantFrom<ListName>('emails', 'phoneNumbers')
  .chain((list) =>
    fc.record({
      kind: fc.constant('list' as const),
      // add appends; replace (no filter) replaces the whole list.
      op: fc.constantFrom('add', 'add', 'replace').chain(anyCase),
      list: fc.constant(list),
      sentPath: anyCase(list),
      items: elementSeeds(list, 1, 2),
    }),
  );
/** `type` in a value filter: as declared, or in any case (the second property). */
const TYPE_AS_DECLARED = fc.constant('type');
const TYPE_IN_OTHER_CASE = anyCase('type').filter((name) => name !== 'type');

const removeWhereOp = (filterAttribute: fc.Arbitrary<string>): fc.Arbitrary<OpSeed> =>
  fc.constantFrom<ListName>('emails', 'phoneNumbers').chain((list) =>
    fc.record({
      kind: fc.constant('removeWhere' as const),
      op: anyCase('remove'),
      list: fc.constant(list),
      filterAttribute,
      type: fc.constantFrom(...(list === 'emails' ? EMAIL_TYPES : PHONE_TYPES)),
    }),
  );
const replaceValueWhereOp = (filterAttribute: fc.Arbitrary<string>): fc.Arbitrary<OpSeed> =>
  fc.record({
    kind: fc.constant('replaceValueWhere' as const),
    op: anyCase('replace'),
    filterAttribute,
    type: fc.constantFrom(...EMAIL_TYPES),
    seed: emailTag,
  });
const noPathOp: fc.Arbitrary<OpSeed> = fc.record({
  kind: fc.constant('noPath' as const),
  op: addOrReplace,
  fields: fc.record(
    {
      displayName: cleanText,
      title: text,
      nickName: text,
      active: activeValue,
      name: fc.oneof(
        fc.record({ givenName: cleanText }),
        fc.record({ familyName: cleanText }),
        fc.record({ givenName: cleanText, familyName: cleanText }),
      ),
      department: text,
      departmentAsUrnKey: fc.boolean(),
      emails: elementSeeds('emails', 1, 2),
    },
    { requiredKeys: ['departmentAsUrnKey'] },
  ),
});

const opSeed: fc.Arbitrary<OpSeed> = fc.oneof(
  { arbitrary: setOp, weight: 4 },
  { arbitrary: activeOp, weight: 2 },
  { arbitrary: unsetOp, weight: 3 },
  { arbitrary: listOp, weight: 2 },
  { arbitrary: removeWhereOp(TYPE_AS_DECLARED), weight: 2 },
  { arbitrary: replaceValueWhereOp(TYPE_AS_DECLARED), weight: 2 },
  { arbitrary: noPathOp, weight: 2 },
);

/** An operation that makes the PATCH a 400 (RFC 7644 §3.12 and docs/provisioning.md). */
const INVALID = [
  { op: { op: 'replace', path: 'noSuchAttribute', value: 'x' }, scimType: 'invalidPath' },
  { op: { op: 'replace', path: 'title', value: 42 }, scimType: 'invalidValue' },
  { op: { op: 'replace', path: 'active', value: 'maybe' }, scimType: 'invalidValue' },
  { op: { op: 'replace', path: 'displayName', value: 'x'.repeat(101) }, scimType: 'invalidValue' },
  { op: { op: 'add', path: 'groups', value: [{ value: '1' }] }, scimType: 'mutability' },
];

interface PatchSeed {
  ops: OpSeed[];
  /** One invalid operation (INVALID[which]) inserted at `at`, or none. */
  invalid: { which: number; at: number } | null;
}
const patchSeed: fc.Arbitrary<PatchSeed> = fc.record({
  ops: fc.array(opSeed, { minLength: 1, maxLength: 5 }),
  // One PATCH in six has an invalid operation.
  invalid: fc.oneof(
    { arbitrary: fc.constant(null), weight: 5 },
    {
      arbitrary: fc.record({ which: fc.nat({ max: INVALID.length - 1 }), at: fc.nat({ max: 5 }) }),
      weight: 1,
    },
  ),
});

/** Value filters whose attribute name is not in its declared case: `emails[TYPE eq "work"]`. */
const otherCaseFilterPatch: fc.Arbitrary<PatchSeed> = fc.record({
  ops: fc.array(
    fc.oneof(removeWhereOp(TYPE_IN_OTHER_CASE), replaceValueWhereOp(TYPE_IN_OTHER_CASE), setOp),
    { minLength: 1, maxLength: 3 },
  ),
  invalid: fc.constant(null),
});

// ---------------------------------------------------------------------------------------------
// The model: a User resource as plain JSON (without id, meta and schemas, which the service
// assigns), and the operations of RFC 7644 §3.5.2 on it.
// ---------------------------------------------------------------------------------------------

let counter = 0;
const RUN = Date.now().toString(36);
const uniqueEmail = (tag: string) => `${tag}.${RUN}.${++counter}@example.com`;

const materialize = (list: ListName, items: ElementSeed[]): Element[] =>
  items.map(({ seed, type, primary }) => ({
    value: list === 'emails' ? uniqueEmail(seed) : seed,
    type,
    ...(primary ? { primary } : {}),
  }));

const isObject = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The resource a seed creates (the request body) and the model of what the service keeps. */
function resourceOf(seed: ResourceSeed): { body: Obj; model: Obj } {
  const userName = `u${++counter}-${RUN}`;
  const name = { givenName: seed.givenName, familyName: seed.familyName };
  const emails = materialize('emails', seed.emails);
  const phoneNumbers = materialize('phoneNumbers', seed.phoneNumbers);
  const body = prune({
    schemas: seed.withEnterpriseSchema ? [CORE_USER, ENTERPRISE_USER] : [CORE_USER],
    userName,
    displayName: seed.displayName,
    name,
    title: seed.title,
    nickName: seed.nickName,
    active: seed.active,
    externalId: seed.externalId,
    emails,
    phoneNumbers,
    ...(seed.withEnterpriseSchema ? { [ENTERPRISE_USER]: seed.enterprise } : {}),
  });
  const model = structuredClone(body);
  delete model.schemas;
  // docs/provisioning.md: without a displayName, the name is the given and family names, else
  // the userName (and the SCIM displayName reads the name back).
  model.displayName ??=
    [seed.givenName, seed.familyName].filter((part) => part !== undefined).join(' ') || userName;
  return { body, model };
}

/** Without undefined members, empty objects and empty lists (unassigned, RFC 7643 §2.5). */
function prune(value: Obj): Obj {
  const out: Obj = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    if (Array.isArray(item) && item.length === 0) continue;
    if (isObject(item) && key !== 'schemas') {
      const inner = prune(item);
      if (Object.keys(inner).length > 0) out[key] = inner;
      continue;
    }
    out[key] = item;
  }
  return out;
}

function boolOf(value: ActiveValue): boolean {
  if (typeof value === 'boolean') return value;
  cover('active as a string');
  return value.toLowerCase() === 'true';
}

/** Sets a singular attribute (`name.givenName`, `urn:…:department`) in the model. */
function setSingular(model: Obj, path: SingularPath | RemovablePath, value: unknown) {
  if (path.startsWith(`${ENTERPRISE_USER}:`)) {
    const attribute = path.slice(ENTERPRISE_USER.length + 1);
    if (!(ENTERPRISE_USER in model)) cover('the extension is added by a PATCH');
    model[ENTERPRISE_USER] = { ...(model[ENTERPRISE_USER] as Obj | undefined), [attribute]: value };
  } else if (path.startsWith('name.')) {
    model.name = { ...(model.name as Obj | undefined), [path.slice(5)]: value };
  } else {
    model[path] = value;
  }
}

function isAssigned(model: Obj, path: RemovablePath): boolean {
  if (path.startsWith('name.')) return isObject(model.name) && path.slice(5) in model.name;
  return path in model;
}

function unset(model: Obj, path: RemovablePath) {
  if (path.startsWith('name.')) {
    const name = { ...(model.name as Obj) };
    delete name[path.slice(5)];
    if (Object.keys(name).length > 0) model.name = name;
    else {
      delete model.name;
      cover('name is emptied and unassigned');
    }
  } else {
    delete model[path];
  }
}

/**
 * How often each case the model decides came up (the property checks that 40 runs reach them all,
 * so a generator change cannot quietly stop exercising one).
 */
const COVERED = [
  'a written primary unmarks the other',
  'a filter replace sets the matched elements',
  'a filter replace adds the element described',
  'a filter remove removes elements',
  'a filter remove empties the list',
  'a remove unassigns an attribute',
  'name is emptied and unassigned',
  'name without a path keeps other sub-attributes',
  'the extension is added by a PATCH',
  'active as a string',
  'an invalid PATCH',
] as const;
type Covered = (typeof COVERED)[number];
const coverage = new Map<Covered, number>();
/** The cases of the PATCH being planned, counted once the service has agreed with the model. */
let pending: Covered[] = [];
const cover = (event: Covered) => pending.push(event);
function commitCoverage(): void {
  for (const event of pending) coverage.set(event, (coverage.get(event) ?? 0) + 1);
  pending = [];
}

const listOf = (model: Obj, list: ListName) => (model[list] as Element[] | undefined) ?? [];
const typeIs = (element: Element, type: string) => element.type?.toLowerCase() === type;

/** `add` appends, `replace` replaces the list; a value written primary is the only primary. */
function writeList(model: Obj, list: ListName, op: 'add' | 'replace', items: Element[]) {
  let kept = op === 'add' ? listOf(model, list) : [];
  if (items.some((item) => item.primary)) {
    if (kept.some((element) => element.primary)) cover('a written primary unmarks the other');
    kept = kept.map(({ primary: _primary, ...rest }) => rest);
  }
  model[list] = [...kept, ...items];
}

function setList(model: Obj, list: ListName, elements: Element[]) {
  if (elements.length > 0) model[list] = elements;
  else delete model[list];
}

/**
 * The request operations of a PATCH seed and the model after them. Operations whose outcome the
 * RFC leaves open are dropped: `remove` of an unassigned attribute or through a filter that matches
 * nothing.
 */
function planPatch(model: Obj, seed: PatchSeed): { operations: Obj[]; after: Obj } {
  const after = structuredClone(model);
  const operations: Obj[] = [];
  pending = [];
  for (const spec of seed.ops) {
    const op = spec.op.toLowerCase() as 'add' | 'replace' | 'remove';
    switch (spec.kind) {
      case 'set':
        setSingular(after, spec.path, spec.value);
        operations.push({ op: spec.op, path: spec.sentPath, value: spec.value });
        break;
      case 'active':
        after.active = boolOf(spec.value);
        operations.push({ op: spec.op, path: spec.sentPath, value: spec.value });
        break;
      case 'unset':
        if (!isAssigned(after, spec.path)) break;
        cover('a remove unassigns an attribute');
        unset(after, spec.path);
        operations.push({ op: spec.op, path: spec.sentPath });
        break;
      case 'list': {
        const items = materialize(spec.list, spec.items);
        writeList(after, spec.list, op as 'add' | 'replace', items);
        operations.push({ op: spec.op, path: spec.sentPath, value: items });
        break;
      }
      case 'removeWhere': {
        const elements = listOf(after, spec.list);
        if (!elements.some((element) => typeIs(element, spec.type))) break;
        cover('a filter remove removes elements');
        if (elements.every((element) => typeIs(element, spec.type))) {
          cover('a filter remove empties the list');
        }
        setList(
          after,
          spec.list,
          elements.filter((element) => !typeIs(element, spec.type)),
        );
        operations.push({
          op: spec.op,
          path: `${spec.list}[${spec.filterAttribute} eq "${spec.type}"]`,
        });
        break;
      }
      case 'replaceValueWhere': {
        const value = uniqueEmail(spec.seed);
        const elements = listOf(after, 'emails');
        const matched = elements.some((element) => typeIs(element, spec.type));
        cover(
          matched
            ? 'a filter replace sets the matched elements'
            : 'a filter replace adds the element described',
        );
        after.emails = elements.some((element) => typeIs(element, spec.type))
          ? elements.map((element) =>
              typeIs(element, spec.type) ? { ...element, value } : element,
            )
          : [...elements, { type: spec.type, value }];
        const path = `emails[${spec.filterAttribute} eq "${spec.type}"].value`;
        operations.push({ op: spec.op, path, value });
        break;
      }
      case 'noPath': {
        const { fields } = spec;
        const value: Obj = {};
        for (const key of ['displayName', 'title', 'nickName'] as const) {
          if (fields[key] === undefined) continue;
          setSingular(after, key, fields[key]);
          value[key] = fields[key];
        }
        if (fields.active !== undefined) {
          after.active = boolOf(fields.active);
          value.active = fields.active;
        }
        if (fields.name !== undefined && Object.keys(fields.name).length > 0) {
          const other = Object.keys((after.name as Obj | undefined) ?? {});
          if (other.some((sub) => !(sub in fields.name!))) {
            cover('name without a path keeps other sub-attributes');
          }
          // A complex attribute: the sub-attributes written replace theirs, the others stay.
          for (const [sub, item] of Object.entries(fields.name)) {
            setSingular(after, `name.${sub}` as SingularPath, item);
          }
          value.name = fields.name;
        }
        if (fields.department !== undefined) {
          setSingular(after, `${ENTERPRISE_USER}:department`, fields.department);
          if (fields.departmentAsUrnKey) {
            value[`${ENTERPRISE_USER}:department`] = fields.department;
          } else {
            value[ENTERPRISE_USER] = { department: fields.department };
          }
        }
        if (fields.emails !== undefined) {
          const items = materialize('emails', fields.emails);
          writeList(after, 'emails', op as 'add' | 'replace', items);
          value.emails = items;
        }
        if (Object.keys(value).length === 0) {
          value.nickName = 'nick';
          after.nickName = 'nick';
        }
        operations.push({ op: spec.op, value });
        break;
      }
    }
  }
  if (operations.length === 0) {
    operations.push({ op: 'replace', path: 'title', value: 'fallback' });
    after.title = 'fallback';
  }
  if (seed.invalid) {
    pending = ['an invalid PATCH'];
    // The service validates the result as a whole (docs/provisioning.md): an invalid value that a
    // later operation overwrites is not seen, so an invalid value goes last. A path that does not
    // resolve, or a read-only one, fails wherever it stands.
    const { scimType } = INVALID[seed.invalid.which];
    const at =
      scimType === 'invalidValue'
        ? operations.length
        : Math.min(seed.invalid.at, operations.length);
    operations.splice(at, 0, INVALID[seed.invalid.which].op);
  }
  return { operations, after };
}

/** What the service answers of the model: the schemas it uses, the attributes as they are. */
const schemasOf = (model: Obj) =>
  ENTERPRISE_USER in model ? [CORE_USER, ENTERPRISE_USER] : [CORE_USER];

/** The REST email: the primary email's value, or the only email's (docs/provisioning.md). */
function restEmailOf(model: Obj): string | null {
  const emails = listOf(model, 'emails');
  const primary = emails.find((email) => email.primary) ?? (emails.length === 1 ? emails[0] : null);
  return primary?.value ?? null;
}

/** A SCIM User answer without what the service assigns: id, meta, and schemas' order. */
function comparable(resource: Obj): { schemas: string[]; attributes: Obj } {
  const attributes = { ...resource };
  const schemas = [...(attributes.schemas as string[])].sort();
  for (const assigned of ['id', 'meta', 'schemas']) delete attributes[assigned];
  return { schemas, attributes };
}

function expectResource(resource: Obj, model: Obj) {
  const { schemas, attributes } = comparable(resource);
  expect(attributes).toStrictEqual(model);
  expect(schemas).toEqual(schemasOf(model).sort());
}

describe('property: SCIM PATCH agrees with a model of RFC 7644 §3.5.2 (e2e, fast-check)', () => {
  useUsersApi();

  /** The stored user, read through SCIM and through REST, is the model. */
  async function expectStored(id: string, model: Obj): Promise<string> {
    const scim = await scimGet(`/Users/${id}`).expect(200);
    expectResource(scim.body, model);
    const rest = await t.http().get(`/users/${id}`).expect(200);
    expect({ name: rest.body.name, email: rest.body.email, active: rest.body.active }).toEqual({
      name: model.displayName,
      // docs/api.md: the REST email is omitted when the user has none.
      email: restEmailOf(model) ?? undefined,
      active: model.active,
    });
    return scim.body.meta.version as string;
  }

  /** Creates the user of a seed, then sends the PATCHes, checking the model after each. */
  async function checkSequence(userSeed: ResourceSeed, patches: PatchSeed[]): Promise<void> {
    const { body, model: created } = resourceOf(userSeed);
    const response = await scimSend('post', '/Users', body);
    expect(response.status).toBe(201);
    let model = created;
    expectResource(response.body, model);
    const id = response.body.id as string;
    let version = await expectStored(id, model);
    for (const patch of patches) {
      const { operations, after } = planPatch(model, patch);
      const answer = await scimSend('patch', `/Users/${id}`, patchOp(...operations));
      if (patch.invalid) {
        expect({ status: answer.status, scimType: answer.body.scimType }).toEqual({
          status: 400,
          scimType: INVALID[patch.invalid.which].scimType,
        });
        // All or nothing: not even the valid operations before the invalid one applied.
        expect(await expectStored(id, model)).toBe(version);
        commitCoverage();
        continue;
      }
      expect(answer.status).toBe(200);
      model = after;
      expectResource(answer.body, model);
      version = await expectStored(id, model);
      commitCoverage();
    }
  }

  it(
    'random Users and PATCH sequences give the model resource; an invalid PATCH changes nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          resourceSeed,
          fc.array(patchSeed, { minLength: 1, maxLength: 5 }),
          checkSequence,
        ),
        {
          seed: SEED,
          numRuns: RUNS,
          interruptAfterTimeLimit: BUDGET_MS,
          markInterruptAsFailure: true,
        },
      );
      const counts = Object.fromEntries(COVERED.map((event) => [event, coverage.get(event) ?? 0]));
      if (process.env.FUZZ_COVERAGE) console.log(counts);
      // Every case the model decides was exercised (and agreed with) at least once.
      if (RUNS >= 40) expect(Object.entries(counts).filter(([, count]) => count === 0)).toEqual([]);
    },
    BUDGET_MS + 10_000,
  );

  // RFC 7644 §3.4.2.2: "Attribute names and attribute operators used in filters are case
  // insensitive" (and RFC 7643 §2.1 for attribute names everywhere). The same model as above, with
  // `type` in a value filter of a PATCH path written in another case (`emails[TYPE eq "work"]`).
  it(
    'value filters in PATCH paths match attribute names in any case',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          resourceSeed.filter((seed) => seed.emails.length > 0),
          fc.array(otherCaseFilterPatch, { minLength: 1, maxLength: 2 }),
          checkSequence,
        ),
        {
          seed: SEED,
          numRuns: Math.ceil(RUNS / 2),
          interruptAfterTimeLimit: BUDGET_MS / 2,
          markInterruptAsFailure: true,
        },
      );
    },
    BUDGET_MS / 2 + 10_000,
  );
});
