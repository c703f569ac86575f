import type { Group } from '../groups/group.entity.js';
import type { MembershipTables } from '../groups/groups.repository.js';
import { invalidValue } from './scim-error.js';
import { type ResolvedPath, resolveGroupPath } from './scim-schema.js';
import {
  type FilterStorage,
  invalidFilter,
  jsonMember,
  memberElement,
  metaOperand,
  type Operand,
} from './scim-user-storage.js';

/**
 * Where each SCIM Group attribute lives, as SQL the filter compiler and the sort use: id,
 * displayName, externalId and meta's times are columns of `groups`; `members` are rows of
 * `group_members`, each seen as a jsonb element (value, $ref, display, type).
 */
export class GroupStorageSql implements FilterStorage {
  constructor(
    private readonly column: (property: keyof Group) => string,
    private readonly tables: MembershipTables,
  ) {}

  resolve(path: string, forSort = false): ResolvedPath {
    const resolved = resolveGroupPath(path);
    if (!resolved) {
      const message = `${path} is not an attribute of Group`;
      throw forSort ? invalidValue(message) : invalidFilter(message);
    }
    return resolved;
  }

  operand(path: ResolvedPath, element?: string): Operand {
    const { attribute, sub } = path;
    if (element !== undefined) {
      const target = sub ?? attribute.subAttributes?.find(({ name }) => name === 'value');
      if (!target) throw invalidFilter(`${attribute.name} needs a sub-attribute`);
      return jsonMember(element, target);
    }
    if (attribute.multiValued) throw invalidFilter(`${attribute.name} is multi-valued`);
    switch (attribute.name) {
      case 'id':
        return { sql: this.column('id'), kind: 'id', caseExact: true };
      case 'displayName':
        return { sql: this.column('displayName'), kind: 'text', caseExact: false };
      case 'externalId':
        return { sql: this.column('externalId'), kind: 'text', caseExact: true };
      default:
        return metaOperand(sub, this.column, 'Group');
    }
  }

  present(path: ResolvedPath): string {
    if (path.attribute.multiValued) {
      return path.sub
        ? this.anyElement(path, (element) => `${this.operand(path, element).sql} IS NOT NULL`)
        : this.anyElement(path, () => 'true');
    }
    const { sql, kind } = this.operand(path);
    return kind === 'text' ? `nullif(${sql}, '') IS NOT NULL` : `${sql} IS NOT NULL`;
  }

  anyElement(_path: ResolvedPath, condition: (element: string) => string): string {
    const { members: m, users: u } = this.tables;
    return (
      `EXISTS (SELECT 1 FROM ${m.table} m JOIN ${u.table} u ON u.${u.column('id')} = m.${m.column('userId')} ` +
      `WHERE m.${m.column('groupId')} = ${this.column('id')} AND ${condition(memberElement(this.tables))})`
    );
  }
}
