import { isEmail } from 'class-validator';
import { codePointLength, isStorableText } from '../http/validators.js';
import type { Membership } from '../groups/groups.repository.js';
import type { User } from '../users/user.entity.js';
import { invalidValue, ScimError } from './scim-error.js';
import {
  COMMON_ATTRIBUTES,
  CORE_USER,
  ENTERPRISE_USER,
  findAttribute,
  type ResolvedPath,
  resolveUserPath,
  type ScimAttribute,
  USER_SCHEMAS,
} from './scim-schema.js';

export type ScimObject = Record<string, unknown>;

/** What a SCIM create or replace writes of a user (docs/provisioning.md, attribute mapping). */
export interface ProvisionedFields {
  name: string;
  email: string | null;
  userName: string;
  active: boolean;
  externalId: string | null;
  scimAttributes: ScimObject;
}

const CORE_ATTRIBUTES = USER_SCHEMAS[0].attributes;
const ENTERPRISE_ATTRIBUTES = USER_SCHEMAS[1].attributes;
/** Stored in columns, not in scimAttributes. */
const COLUMN_ATTRIBUTES = new Set([
  'id',
  'externalId',
  'meta',
  'userName',
  'displayName',
  'active',
]);
const NAME_LENGTH = 100;
const EMAIL_LENGTH = 254;

/** A JSON object (not an array, not null). */
export const isObject = (value: unknown): value is ScimObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A boolean, or the strings "true" and "false" in any case (Entra ID sends `"False"`). */
function toBoolean(value: unknown, where: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(?:true|false)$/i.test(value)) {
    return value.toLowerCase() === 'true';
  }
  throw invalidValue(`${where} must be a boolean`);
}

/** One value of an attribute, checked and canonicalised; undefined for null (unassigned). */
function checkValue(attribute: ScimAttribute, value: unknown, where: string): unknown {
  if (value === null) return undefined;
  switch (attribute.type) {
    case 'boolean':
      return toBoolean(value, where);
    case 'complex': {
      if (!isObject(value)) throw invalidValue(`${where} must be an object`);
      const checked = checkObject(attribute.subAttributes ?? [], value, where);
      return Object.keys(checked).length > 0 ? checked : undefined;
    }
    default: {
      if (typeof value !== 'string') throw invalidValue(`${where} must be a string`);
      if (!isStorableText(value)) {
        throw invalidValue(`${where} must not contain NUL characters or unpaired surrogates`);
      }
      const max = attribute.maxLength ?? 256;
      if (codePointLength(value) > max) {
        throw invalidValue(`${where} must be at most ${max} characters`);
      }
      return value;
    }
  }
}

/**
 * An attribute's value as the schema declares it: an array of values when multi-valued (a single
 * value is taken as an array of one), at most one of them primary.
 */
export function checkAttribute(attribute: ScimAttribute, value: unknown, where: string): unknown {
  if (!attribute.multiValued || value === null) return checkValue(attribute, value, where);
  const values = (Array.isArray(value) ? value : [value])
    .map((item, index) => checkValue(attribute, item, `${where}[${index}]`))
    .filter((item) => item !== undefined);
  if (values.filter((item) => isObject(item) && item.primary === true).length > 1) {
    throw invalidValue(`${where} may have at most one primary value`);
  }
  return values.length > 0 ? values : undefined;
}

/**
 * The attributes of `value` that `attributes` declares, under their declared names (names are
 * case-insensitive). An undeclared one is a 400; a read-only one is ignored (RFC 7643 §2.2).
 */
export function checkObject(
  attributes: readonly ScimAttribute[],
  value: ScimObject,
  where: string,
  resourceType = 'User',
) {
  const checked: ScimObject = {};
  for (const [key, item] of Object.entries(value)) {
    const attribute = findAttribute(attributes, key);
    const path = where ? `${where}.${key}` : key;
    if (!attribute) throw invalidValue(`${path} is not an attribute of ${resourceType}`);
    if (attribute.mutability === 'readOnly') continue;
    const result = checkAttribute(attribute, item, path);
    if (result !== undefined) checked[attribute.name] = result;
  }
  return checked;
}

/** A User resource's attributes, canonicalised: the core ones at the top, the extension's below. */
export function checkUserResource(body: unknown): ScimObject {
  if (!isObject(body)) throw new ScimError(400, 'the body must be a JSON object', 'invalidSyntax');
  const { schemas, ...attributes } = body;
  const known = USER_SCHEMAS.map((schema) => schema.id.toLowerCase());
  if (
    !Array.isArray(schemas) ||
    !schemas.some(
      (schema) => typeof schema === 'string' && schema.toLowerCase() === CORE_USER.toLowerCase(),
    ) ||
    !schemas.every((schema) => typeof schema === 'string' && known.includes(schema.toLowerCase()))
  ) {
    throw new ScimError(
      400,
      `schemas must list ${CORE_USER} (and may list ${ENTERPRISE_USER})`,
      'invalidSyntax',
    );
  }
  const extensionKey = Object.keys(attributes).find(
    (key) => key.toLowerCase() === ENTERPRISE_USER.toLowerCase(),
  );
  const extension = extensionKey === undefined ? undefined : attributes[extensionKey];
  if (extensionKey !== undefined) delete attributes[extensionKey];
  const checked = checkObject([...COMMON_ATTRIBUTES, ...CORE_ATTRIBUTES], attributes, '');
  if (extension !== undefined && extension !== null) {
    if (!isObject(extension)) throw invalidValue(`${ENTERPRISE_USER} must be an object`);
    const values = checkObject(ENTERPRISE_ATTRIBUTES, extension, ENTERPRISE_USER);
    if (Object.keys(values).length > 0) checked[ENTERPRISE_USER] = values;
  }
  return checked;
}

/** The primary email's index: the one marked primary, else the only one. */
function primaryIndex(emails: ScimObject[]): number {
  const marked = emails.findIndex((email) => email.primary === true);
  return marked >= 0 || emails.length !== 1 ? marked : 0;
}

function trimmed(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** REST's name: displayName, else the formatted or given and family names, else userName. */
function nameOf(resource: ScimObject, userName: string): string {
  const displayName = trimmed(resource.displayName);
  if (displayName) return displayName;
  const name = isObject(resource.name) ? resource.name : {};
  const joined = [name.givenName, name.familyName].map(trimmed).filter(Boolean).join(' ');
  const fallback = trimmed(name.formatted) ?? (trimmed(joined) || userName.trim());
  return [...fallback].slice(0, NAME_LENGTH).join('') || userName;
}

/** The user fields of a checked User resource (checkUserResource). */
export function toUserFields(resource: ScimObject): ProvisionedFields {
  const userName = resource.userName;
  if (typeof userName !== 'string' || userName.trim() === '') {
    throw invalidValue('userName is required and must not be empty');
  }
  const emails = (resource.emails as ScimObject[] | undefined) ?? [];
  const primary = primaryIndex(emails);
  const email = primary >= 0 ? (emails[primary].value as string | undefined) : undefined;
  if (email !== undefined && (codePointLength(email) > EMAIL_LENGTH || !isEmail(email))) {
    throw invalidValue(`emails[${primary}].value must be a valid email address`);
  }
  const scimAttributes: ScimObject = {};
  for (const [key, value] of Object.entries(resource)) {
    if (!COLUMN_ATTRIBUTES.has(key)) scimAttributes[key] = value;
  }
  if (email !== undefined) {
    // The REST email column holds the primary's value; its element keeps the rest.
    const kept = { ...emails[primary] };
    delete kept.value;
    scimAttributes.emails = emails.map((item, index) => (index === primary ? kept : item));
  }
  return {
    name: nameOf(resource, userName),
    email: email ?? null,
    userName,
    active: resource.active === undefined ? true : (resource.active as boolean),
    externalId: (resource.externalId as string | undefined) ?? null,
    scimAttributes,
  };
}

/** The stored emails with the REST email as the value of its element (or a primary one). */
function emailsOf(user: User): ScimObject[] | undefined {
  const stored = (user.scimAttributes.emails as ScimObject[] | undefined) ?? [];
  const columnIndex = stored.findIndex((email) => email.value === undefined);
  if (user.email === null) {
    const rest = stored.filter((_, index) => index !== columnIndex);
    return rest.length > 0 ? rest : undefined;
  }
  if (columnIndex < 0) return [{ value: user.email, primary: true }, ...stored];
  return stored.map((email, index) =>
    index === columnIndex ? { value: user.email, ...email } : email,
  );
}

/** The version of a user as an ETag (weak: SCIM's representations vary with `attributes`). */
export const etagOf = (version: number) => `W/"${version}"`;

/** A user's `groups` elements, from its memberships. */
function groupsOf(memberships: readonly Membership[]): ScimObject[] {
  return memberships.map(({ groupId, displayName }) => ({
    value: String(groupId),
    $ref: `/scim/v2/Groups/${groupId}`,
    display: displayName,
    type: 'direct',
  }));
}

/** The SCIM User of a user, with the groups it is a member of. */
export function toUserResource(user: User, memberships: readonly Membership[] = []): ScimObject {
  const { [ENTERPRISE_USER]: extension, ...core } = user.scimAttributes;
  delete core.emails;
  const emails = emailsOf(user);
  return {
    schemas: extension ? [CORE_USER, ENTERPRISE_USER] : [CORE_USER],
    id: String(user.id),
    ...(user.externalId === null ? {} : { externalId: user.externalId }),
    userName: user.userName,
    displayName: user.name,
    active: user.active,
    ...core,
    ...(emails ? { emails } : {}),
    ...(memberships.length > 0 ? { groups: groupsOf(memberships) } : {}),
    ...(extension ? { [ENTERPRISE_USER]: extension } : {}),
    meta: {
      resourceType: 'User',
      created: user.createdAt.toISOString(),
      lastModified: user.updatedAt.toISOString(),
      location: `/scim/v2/Users/${user.id}`,
      version: etagOf(user.version),
    },
  };
}

/** Resolves an attribute path of one resource type (resolveUserPath, resolveGroupPath). */
export type PathResolver = (path: string) => ResolvedPath | undefined;

/** `attributes` or `excludedAttributes`: comma-separated attribute paths, each declared. */
function pathsOf(
  list: string,
  resolve: PathResolver,
): { top: string; sub?: string; extension?: string }[] {
  return list
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      const path = resolve(item);
      if (!path) throw invalidValue(`${item} is not an attribute of this resource type`);
      return { top: path.attribute.name, sub: path.sub?.name, extension: path.extension };
    });
}

/**
 * The resource with only the asked attributes (`attributes`), or without the excluded ones;
 * `id` and `schemas` always stay (returned: always).
 */
export function project(
  resource: ScimObject,
  attributes?: string,
  excludedAttributes?: string,
  resolve: PathResolver = resolveUserPath,
): ScimObject {
  if (attributes) {
    const kept: ScimObject = { schemas: resource.schemas, id: resource.id };
    for (const { top, sub, extension } of pathsOf(attributes, resolve)) {
      const from = extension ? (resource[extension] as ScimObject | undefined) : resource;
      const into = extension ? ((kept[extension] as ScimObject | undefined) ?? {}) : kept;
      const value = from?.[top];
      if (value === undefined) continue;
      if (sub === undefined) into[top] = value;
      else if (Array.isArray(value)) {
        into[top] = value.map((item: ScimObject) => ({ [sub]: item[sub] }));
      } else if (isObject(value) && value[sub] !== undefined) {
        into[top] = { ...(into[top] as ScimObject | undefined), [sub]: value[sub] };
      }
      if (extension && Object.keys(into).length > 0) kept[extension] = into;
    }
    return kept;
  }
  if (!excludedAttributes) return resource;
  const copy = structuredClone(resource);
  for (const { top, sub, extension } of pathsOf(excludedAttributes, resolve)) {
    if (top === 'id') continue;
    const from = extension ? (copy[extension] as ScimObject | undefined) : copy;
    if (!from) continue;
    if (sub === undefined) delete from[top];
    else if (Array.isArray(from[top]))
      for (const item of from[top] as ScimObject[]) delete item[sub];
    else if (isObject(from[top])) delete from[top][sub];
  }
  return copy;
}
