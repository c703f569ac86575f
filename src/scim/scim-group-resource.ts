import { MAX_ID } from '../common/patterns.js';
import type { Group } from '../groups/group.entity.js';
import type { GroupFields, Member } from '../groups/groups.repository.js';
import { invalidValue, ScimError } from './scim-error.js';
import { COMMON_ATTRIBUTES, CORE_GROUP, GROUP_SCHEMA } from './scim-schema.js';
import { checkObject, etagOf, isObject, type ScimObject } from './scim-user-resource.js';

/** What a create or a replace writes of a group: its fields and its members' user ids. */
export interface GroupWrite {
  fields: GroupFields;
  memberIds: number[];
}

/** A member's `value`: a user's id, as a string; 400 invalidValue otherwise. */
export function memberId(value: unknown, where: string): number {
  if (typeof value !== 'string' || !/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > MAX_ID) {
    throw invalidValue(`${where} must be the id of a user`);
  }
  return Number(value);
}

/**
 * The user ids of `members` elements (checked against the schema first): each needs a `value`,
 * and a `type`, when given, is User (groups do not nest).
 */
export function memberIdsOf(members: unknown, where = 'members'): number[] {
  if (members === null || members === undefined) return [];
  const list = Array.isArray(members) ? members : [members];
  const attribute = GROUP_SCHEMA.attributes.find(({ name }) => name === 'members')!;
  return list.map((member, index) => {
    const at = `${where}[${index}]`;
    if (!isObject(member)) throw invalidValue(`${at} must be an object`);
    const checked = checkObject(attribute.subAttributes!, member, at, 'Group');
    if (typeof checked.type === 'string' && checked.type.toLowerCase() !== 'user') {
      throw invalidValue(`${at}.type must be User: a group's members are users`);
    }
    return memberId(checked.value, `${at}.value`);
  });
}

/** A displayName: a string of 1 to 256 characters, not only spaces. */
export function displayNameOf(value: unknown, where = 'displayName'): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalidValue(`${where} is required and must not be empty`);
  }
  return value;
}

/** An externalId, or null to remove it. */
export function externalIdOf(value: unknown): string | null {
  return value === undefined || value === null ? null : (value as string);
}

/** A Group resource of a create or a replace: checked against the schema, then its fields. */
export function checkGroupResource(body: unknown): GroupWrite {
  if (!isObject(body)) throw new ScimError(400, 'the body must be a JSON object', 'invalidSyntax');
  const { schemas, ...attributes } = body;
  if (
    !Array.isArray(schemas) ||
    schemas.length === 0 ||
    !schemas.every(
      (schema) => typeof schema === 'string' && schema.toLowerCase() === CORE_GROUP.toLowerCase(),
    )
  ) {
    throw new ScimError(400, `schemas must be ["${CORE_GROUP}"]`, 'invalidSyntax');
  }
  const { members, ...rest } = attributes;
  const checked = checkObject(schemaAttributes(), rest, '', 'Group');
  return {
    fields: {
      displayName: displayNameOf(checked.displayName),
      externalId: externalIdOf(checked.externalId),
    },
    memberIds: [...new Set(memberIdsOf(members))],
  };
}

/** The Group schema's attributes with the common ones (id, externalId, meta). */
function schemaAttributes() {
  return [...COMMON_ATTRIBUTES, ...GROUP_SCHEMA.attributes];
}

/** The SCIM Group of a group; `members` undefined leaves them out (not read). */
export function toGroupResource(group: Group, members?: readonly Member[]): ScimObject {
  return {
    schemas: [CORE_GROUP],
    id: String(group.id),
    ...(group.externalId === null ? {} : { externalId: group.externalId }),
    displayName: group.displayName,
    ...(members && members.length > 0
      ? {
          members: members.map(({ userId, name }) => ({
            value: String(userId),
            $ref: `/scim/v2/Users/${userId}`,
            display: name,
            type: 'User',
          })),
        }
      : {}),
    meta: {
      resourceType: 'Group',
      created: group.createdAt.toISOString(),
      lastModified: group.updatedAt.toISOString(),
      location: `/scim/v2/Groups/${group.id}`,
      version: etagOf(group.version),
    },
  };
}
