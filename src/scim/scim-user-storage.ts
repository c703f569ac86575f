import type { Filter } from 'scim2-parse-filter';
import type { MembershipTables } from '../groups/groups.repository.js';
import type { User } from '../users/user.entity.js';
import { invalidValue, ScimError } from './scim-error.js';
import { type ResolvedPath, resolveUserPath, type ScimAttribute } from './scim-schema.js';

/**
 * Where each SCIM User attribute lives in the users table, as SQL the filter compiler and the
 * sort use. Columns: id, userName, displayName (REST name), active, externalId, meta's times, and
 * the primary email (REST email). Every other declared attribute is a key of `scimAttributes`
 * (jsonb), an extension's under its schema URN; in the stored `emails`, the element of the REST
 * email carries no `value` (the column is its only copy, so a REST change of the email is a change
 * of the SCIM one).
 */
export type ColumnOf = (property: keyof User) => string;

/** A value the filter compares: its SQL and how it compares. */
export interface Operand {
  sql: string;
  kind: 'text' | 'boolean' | 'dateTime' | 'id';
  caseExact: boolean;
}

/** What the filter compiler and the sort need of a resource type's storage. */
export interface FilterStorage {
  /** The declared attribute a path names; 400 (invalidFilter, or invalidValue for a sort) if none. */
  resolve(path: string, forSort?: boolean): ResolvedPath;
  /** The operand of a singular attribute, or of a sub-attribute inside `element` (jsonb). */
  operand(path: ResolvedPath, element?: string): Operand;
  /** True when the attribute has a value (`pr`). */
  present(path: ResolvedPath): string;
  /** EXISTS an element of a multi-valued attribute for which `condition(element)` holds. */
  anyElement(path: ResolvedPath, condition: (element: string) => string): string;
}

const COLUMN_OF_ATTRIBUTE: Record<string, keyof User> = {
  id: 'id',
  userName: 'userName',
  displayName: 'name',
  active: 'active',
  externalId: 'externalId',
};

/**
 * The database's functions (migration 1718000000014) that return the users one `eq` on an
 * attribute names: the look-ups a provider sends before each create. PL/pgSQL keeps their plans,
 * where the same condition in the service's unnamed statement is planned on every call.
 */
const LOOKUP_FUNCTIONS: Record<string, string> = {
  userName: '"users_with_user_name"',
  externalId: '"users_with_external_id"',
};

const META_COLUMNS: Record<string, 'createdAt' | 'updatedAt'> = {
  created: 'createdAt',
  lastModified: 'updatedAt',
};

export const invalidFilter = (message: string) => new ScimError(400, message, 'invalidFilter');

function kindOf(attribute: ScimAttribute): Operand['kind'] {
  if (attribute.type === 'boolean') return 'boolean';
  if (attribute.type === 'dateTime') return 'dateTime';
  return 'text';
}

/** A text member of a jsonb value, as text, or as boolean for a boolean attribute. */
export function jsonMember(object: string, attribute: ScimAttribute): Operand {
  const member = `(${object} ->> ${literal(attribute.name)})`;
  const kind = kindOf(attribute);
  return {
    sql: kind === 'boolean' ? `${member}::boolean` : member,
    kind,
    caseExact: attribute.caseExact ?? false,
  };
}

/** A constant string as an SQL literal (only names from the schema ever pass here). */
export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** A user's group (its `groups` element) as jsonb, from a group row aliased `g`. */
export function groupElement({ groups }: MembershipTables): string {
  const id = `g.${groups.column('id')}`;
  return (
    `jsonb_build_object('value', ${id}::text, '$ref', '/scim/v2/Groups/' || ${id}, ` +
    `'display', g.${groups.column('displayName')}, 'type', 'direct')`
  );
}

/** A group's member (its `members` element) as jsonb, from a user row aliased `u`. */
export function memberElement({ users }: MembershipTables): string {
  const id = `u.${users.column('id')}`;
  return (
    `jsonb_build_object('value', ${id}::text, '$ref', '/scim/v2/Users/' || ${id}, ` +
    `'display', u.${users.column('name')}, 'type', 'User')`
  );
}

/** The SQL of the storage of one user: columns and the jsonb of the other attributes. */
export class UserStorageSql implements FilterStorage {
  constructor(
    private readonly column: ColumnOf,
    private readonly memberships: MembershipTables,
  ) {}

  resolve(path: string, forSort = false): ResolvedPath {
    return resolveFilterPath(path, forSort);
  }

  /**
   * For a filter that is one `eq` of userName or externalId with a string, the call of the
   * database's function that returns those users (they compare as the filter compiler would:
   * userName case-insensitively, externalId exactly), its value a parameter; else undefined.
   */
  lookup(filter: Filter | undefined, param: (value: unknown) => string): string | undefined {
    if (filter?.op !== 'eq' || typeof filter.compValue !== 'string') return undefined;
    const { attribute, sub, extension } = this.resolve(filter.attrPath);
    const lookup = sub || extension ? undefined : LOOKUP_FUNCTIONS[attribute.name];
    return lookup && `${lookup}(${param(filter.compValue)})`;
  }

  /** The jsonb object that holds a top-level attribute (core, or its extension's). */
  private container({ extension }: ResolvedPath): string {
    const attributes = this.column('scimAttributes');
    return extension ? `(${attributes} -> ${literal(extension)})` : attributes;
  }

  /**
   * The operand of a singular attribute path, or of a multi-valued attribute's sub-attribute
   * inside `element` (a jsonb element of its array).
   */
  operand(path: ResolvedPath, element?: string): Operand {
    const { attribute, sub } = path;
    if (element !== undefined) {
      const target = sub ?? findValue(attribute);
      const operand = jsonMember(element, target);
      // The REST email's element holds no value: the column is its value.
      if (attribute.name === 'emails' && target.name === 'value') {
        operand.sql = `coalesce(${operand.sql}, ${this.column('email')})`;
      }
      return operand;
    }
    if (attribute.multiValued) throw invalidFilter(`${attribute.name} is multi-valued`);
    const property = COLUMN_OF_ATTRIBUTE[attribute.name];
    if (property && !path.extension) {
      const sql = this.column(property);
      if (property === 'id') return { sql, kind: 'id', caseExact: true };
      return { sql, kind: kindOf(attribute), caseExact: attribute.caseExact ?? false };
    }
    if (attribute.name === 'meta' && !path.extension) return this.meta(sub);
    if (attribute.type === 'complex') {
      if (!sub) throw invalidFilter(`${attribute.name} needs a sub-attribute`);
      return jsonMember(`(${this.container(path)} -> ${literal(attribute.name)})`, sub);
    }
    return jsonMember(this.container(path), attribute);
  }

  /** True when the attribute has a value (`pr`). */
  present(path: ResolvedPath): string {
    const { attribute, sub } = path;
    if (attribute.multiValued) {
      return sub
        ? this.anyElement(path, (element) => `${this.operand(path, element).sql} IS NOT NULL`)
        : this.anyElement(path, () => 'true');
    }
    if (attribute.type === 'complex' && !sub && !(attribute.name === 'meta')) {
      return `jsonb_typeof(${this.container(path)} -> ${literal(attribute.name)}) = 'object'`;
    }
    const { sql, kind } = this.operand(path);
    return kind === 'text' ? `nullif(${sql}, '') IS NOT NULL` : `${sql} IS NOT NULL`;
  }

  /**
   * EXISTS an element of a multi-valued attribute for which `condition(element)` holds. For
   * `emails`, a user with a REST email and no stored element of it has one: `{"primary": true}`.
   */
  anyElement(path: ResolvedPath, condition: (element: string) => string): string {
    if (path.attribute.name === 'groups' && !path.extension) {
      const { members: m, groups: g } = this.memberships;
      return (
        `EXISTS (SELECT 1 FROM ${m.table} m JOIN ${g.table} g ON g.${g.column('id')} = m.${m.column('groupId')} ` +
        `WHERE m.${m.column('userId')} = ${this.column('id')} AND ${condition(groupElement(this.memberships))})`
      );
    }
    const array = `(${this.container(path)} -> ${literal(path.attribute.name)})`;
    const elements = `jsonb_array_elements(CASE WHEN jsonb_typeof(${array}) = 'array' THEN ${array} ELSE '[]' END)`;
    let source = `SELECT e FROM ${elements} AS t(e)`;
    if (path.attribute.name === 'emails') {
      source +=
        ` UNION ALL SELECT '{"primary": true}'::jsonb WHERE ${this.column('email')} IS NOT NULL` +
        ` AND NOT EXISTS (SELECT 1 FROM ${elements} AS s(e) WHERE NOT (s.e ? 'value'))`;
    }
    return `EXISTS (SELECT 1 FROM (${source}) AS el(e) WHERE ${condition('el.e')})`;
  }

  private meta(sub: ScimAttribute | undefined): Operand {
    return metaOperand(sub, this.column, 'User');
  }
}

/** The operand of `meta.<sub>` of a resource type stored with the versioned-row columns. */
export function metaOperand(
  sub: ScimAttribute | undefined,
  column: (property: 'id' | 'createdAt' | 'updatedAt' | 'version') => string,
  resourceType: 'User' | 'Group',
): Operand {
  if (!sub) throw invalidFilter('meta needs a sub-attribute');
  const property = META_COLUMNS[sub.name];
  if (property) return { sql: column(property), kind: 'dateTime', caseExact: true };
  const sql = {
    resourceType: `'${resourceType}'`,
    location: `'/scim/v2/${resourceType}s/' || ${column('id')}`,
    version: `'W/"' || ${column('version')} || '"'`,
  }[sub.name]!;
  return { sql, kind: 'text', caseExact: true };
}

function findValue(attribute: ScimAttribute): ScimAttribute {
  const value = attribute.subAttributes?.find((sub) => sub.name === 'value');
  if (!value) throw invalidFilter(`${attribute.name} needs a sub-attribute`);
  return value;
}

/** Resolves a filter's or sortBy's attribute path; an undeclared one is 400 invalidFilter. */
export function resolveFilterPath(path: string, forSort = false): ResolvedPath {
  const resolved = resolveUserPath(path);
  if (!resolved) {
    const message = `${path} is not an attribute of User`;
    throw forSort ? invalidValue(message) : invalidFilter(message);
  }
  return resolved;
}
