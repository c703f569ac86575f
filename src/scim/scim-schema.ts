/**
 * The one description of what the service speaks over SCIM 2.0 (RFC 7643): discovery is
 * generated from it (scim-discovery.ts), requests are validated against it (scim-resource.ts),
 * filters and PATCH paths resolve through it. An attribute declared here works everywhere.
 */
export type ScimType = 'string' | 'boolean' | 'dateTime' | 'reference' | 'complex';

export interface ScimAttribute {
  name: string;
  type: ScimType;
  description: string;
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned?: 'always' | 'never' | 'default' | 'request';
  uniqueness?: 'none' | 'server' | 'global';
  canonicalValues?: string[];
  referenceTypes?: string[];
  subAttributes?: ScimAttribute[];
  /** Longest accepted string, in code points (not part of RFC 7643's schema). */
  maxLength?: number;
}

export interface ScimSchema {
  id: string;
  name: string;
  description: string;
  attributes: ScimAttribute[];
}

export const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE_USER = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const SEARCH_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** The largest `count` of a list (ServiceProviderConfig's filter.maxResults). */
export const MAX_RESULTS = 200;
export const DEFAULT_COUNT = 100;

const text = (name: string, description: string, extra: Partial<ScimAttribute> = {}) =>
  ({ name, type: 'string', description, maxLength: 256, ...extra }) satisfies ScimAttribute;

const flag = (name: string, description: string) =>
  ({ name, type: 'boolean', description }) satisfies ScimAttribute;

/** A multi-valued complex attribute of `value`, `type` (one of `types`), `primary`, `display`. */
function multiValued(
  name: string,
  description: string,
  types: string[],
  value: Partial<ScimAttribute> = {},
): ScimAttribute {
  return {
    name,
    type: 'complex',
    multiValued: true,
    description,
    subAttributes: [
      text('value', `The ${name} value`, value),
      text('display', 'A human-readable name'),
      text('type', 'A label of its function', { canonicalValues: types }),
      flag('primary', 'The preferred value (at most one)'),
    ],
  };
}

const CORE_USER_ATTRIBUTES: ScimAttribute[] = [
  text('userName', 'Unique identifier of the user at the identity provider', {
    required: true,
    uniqueness: 'server',
  }),
  {
    name: 'name',
    type: 'complex',
    description: "The components of the user's name",
    subAttributes: [
      text('formatted', 'The full name, formatted for display'),
      text('familyName', 'The family name'),
      text('givenName', 'The given name'),
      text('middleName', 'The middle name'),
      text('honorificPrefix', 'The honorific prefix (Ms.)'),
      text('honorificSuffix', 'The honorific suffix (III)'),
    ],
  },
  text('displayName', 'The name shown to people (the REST name, 1 to 100 characters)', {
    maxLength: 100,
  }),
  text('nickName', 'The casual name'),
  text('profileUrl', "A URL of the user's online profile", { type: 'reference' }),
  text('title', "The user's title (Vice President)"),
  text('userType', 'The relation of the user to the organisation (Employee)'),
  text('preferredLanguage', 'The preferred language (en-US)'),
  text('locale', 'The locale for localised formats (en-US)'),
  text('timezone', 'The time zone, in IANA format (Europe/Paris)'),
  flag('active', "The user's administrative status; false blocks nothing but is shown"),
  multiValued('emails', 'Email addresses; the primary one (or the only one) is the REST email', [
    'work',
    'home',
    'other',
  ]),
  multiValued('phoneNumbers', 'Phone numbers', ['work', 'home', 'mobile', 'fax', 'pager', 'other']),
  {
    name: 'addresses',
    type: 'complex',
    multiValued: true,
    description: 'Physical mailing addresses',
    subAttributes: [
      text('formatted', 'The full address, formatted for display'),
      text('streetAddress', 'The street address'),
      text('locality', 'The city or locality'),
      text('region', 'The state or region'),
      text('postalCode', 'The postal code'),
      text('country', 'The country (ISO 3166-1 alpha-2)'),
      text('type', 'A label of its function', { canonicalValues: ['work', 'home', 'other'] }),
      flag('primary', 'The preferred address (at most one)'),
    ],
  },
  {
    name: 'groups',
    type: 'complex',
    multiValued: true,
    mutability: 'readOnly',
    description: "The groups the user is a member of (changed through the groups' members)",
    subAttributes: [
      text('value', 'The id of the group', { mutability: 'readOnly', caseExact: true }),
      text('$ref', 'The URI of the group', {
        type: 'reference',
        referenceTypes: ['Group'],
        mutability: 'readOnly',
      }),
      text('display', 'The displayName of the group', { mutability: 'readOnly' }),
      text('type', 'How the user is a member', {
        canonicalValues: ['direct'],
        mutability: 'readOnly',
      }),
    ],
  },
];

const ENTERPRISE_USER_ATTRIBUTES: ScimAttribute[] = [
  text('employeeNumber', 'The number of the user in the organisation'),
  text('costCenter', 'The cost center'),
  text('organization', 'The organisation'),
  text('division', 'The division'),
  text('department', 'The department'),
  {
    name: 'manager',
    type: 'complex',
    description: "The user's manager",
    subAttributes: [
      text('value', 'The id of the manager'),
      text('displayName', 'The name of the manager', { mutability: 'readOnly' }),
    ],
  },
];

const CORE_GROUP_ATTRIBUTES: ScimAttribute[] = [
  text('displayName', 'The name of the group (1 to 256 characters)', { required: true }),
  {
    name: 'members',
    type: 'complex',
    multiValued: true,
    description: 'The users in the group',
    subAttributes: [
      text('value', 'The id of the user', { mutability: 'immutable', caseExact: true }),
      text('$ref', 'The URI of the user', {
        type: 'reference',
        referenceTypes: ['User'],
        mutability: 'readOnly',
      }),
      text('display', 'The displayName of the user', { mutability: 'readOnly' }),
      text('type', 'The type of the member', {
        canonicalValues: ['User'],
        mutability: 'immutable',
      }),
    ],
  },
];

export const GROUP_SCHEMA: ScimSchema = {
  id: CORE_GROUP,
  name: 'Group',
  description: 'Group',
  attributes: CORE_GROUP_ATTRIBUTES,
};

export const USER_SCHEMAS: ScimSchema[] = [
  { id: CORE_USER, name: 'User', description: 'User Account', attributes: CORE_USER_ATTRIBUTES },
  {
    id: ENTERPRISE_USER,
    name: 'EnterpriseUser',
    description: 'Enterprise User',
    attributes: ENTERPRISE_USER_ATTRIBUTES,
  },
];

/**
 * The attributes every resource has (RFC 7643 §3.1), apart from its schema's own. `id` and `meta`
 * are assigned by the service.
 */
export const COMMON_ATTRIBUTES: ScimAttribute[] = [
  text('id', 'The service-assigned id (the REST id)', {
    caseExact: true,
    mutability: 'readOnly',
    returned: 'always',
    uniqueness: 'server',
  }),
  text('externalId', "The identity provider's id of the resource", { caseExact: true }),
  {
    name: 'meta',
    type: 'complex',
    description: 'Resource metadata',
    mutability: 'readOnly',
    subAttributes: [
      text('resourceType', 'The resource type', { mutability: 'readOnly', caseExact: true }),
      { name: 'created', type: 'dateTime', description: 'Created at', mutability: 'readOnly' },
      {
        name: 'lastModified',
        type: 'dateTime',
        description: 'Last changed at',
        mutability: 'readOnly',
      },
      text('location', 'The URI of the resource', { type: 'reference', mutability: 'readOnly' }),
      text('version', 'The ETag of the resource', { mutability: 'readOnly', caseExact: true }),
    ],
  },
];

/** Finds an attribute by name, ignoring case (RFC 7643 §2.1). */
export function findAttribute(
  attributes: readonly ScimAttribute[],
  name: string,
): ScimAttribute | undefined {
  const lower = name.toLowerCase();
  return attributes.find((attribute) => attribute.name.toLowerCase() === lower);
}

/** Where an attribute path points: its schema, the top attribute and maybe a sub-attribute. */
export interface ResolvedPath {
  /** The schema's URN when the attribute is an extension's, else undefined (core or common). */
  extension?: string;
  attribute: ScimAttribute;
  sub?: ScimAttribute;
}

/** A resource type's schemas: its core schema first, then its extensions. */
export type ResourceSchemas = readonly ScimSchema[];

/**
 * Resolves `name.sub`, optionally prefixed with a schema URN (`urn:…:User:userName`), against a
 * resource type's schemas. Undefined for anything not declared.
 */
export function resolvePath(schemas: ResourceSchemas, path: string): ResolvedPath | undefined {
  const [core, ...extensions] = schemas;
  let rest = path;
  let extension: ScimSchema | undefined;
  for (const schema of schemas) {
    if (rest.toLowerCase().startsWith(`${schema.id.toLowerCase()}:`)) {
      rest = rest.slice(schema.id.length + 1);
      if (schema !== core) extension = schema;
    }
  }
  const [name, subName, ...more] = rest.split('.');
  if (more.length > 0 || (extension && !extensions.includes(extension))) return undefined;
  const pool = extension ? extension.attributes : [...COMMON_ATTRIBUTES, ...core.attributes];
  const attribute = findAttribute(pool, name);
  if (!attribute) return undefined;
  if (subName === undefined) return { extension: extension?.id, attribute };
  const sub = findAttribute(attribute.subAttributes ?? [], subName);
  return sub ? { extension: extension?.id, attribute, sub } : undefined;
}

/** resolvePath against the User schemas (core and enterprise). */
export const resolveUserPath = (path: string) => resolvePath(USER_SCHEMAS, path);

/** resolvePath against the Group schema. */
export const resolveGroupPath = (path: string) => resolvePath([GROUP_SCHEMA], path);
