import { Injectable } from '@nestjs/common';
import { NotFoundError, PreconditionFailedError } from '../common/errors.js';
import { MAX_ID } from '../common/patterns.js';
import type { Group } from '../groups/group.entity.js';
import {
  type GroupFields,
  GroupsRepository,
  type MemberChange,
  UnknownMembersError,
} from '../groups/groups.repository.js';
import type { IfMatch } from '../users/users.service.js';
import { invalidValue, ScimError } from './scim-error.js';
import { FilterCompiler, parseFilter } from './scim-filter.js';
import {
  checkGroupResource,
  displayNameOf,
  externalIdOf,
  memberIdsOf,
  toGroupResource,
} from './scim-group-resource.js';
import { GroupStorageSql } from './scim-group-storage.js';
import type { ScimListQuery } from './scim-list-query.js';
import { matches, parsePatch, type PatchOperation, targetOf } from './scim-patch.js';
import { LIST_RESPONSE, resolveGroupPath } from './scim-schema.js';
import { checkObject, project, type ScimObject } from './scim-user-resource.js';

type Projection = Pick<ScimListQuery, 'attributes' | 'excludedAttributes'>;

/** A SCIM id of a group: its id as a string; anything else names no group. */
function idOf(id: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(id) || Number(id) > MAX_ID) {
    throw new NotFoundError(`Group ${id} not found`);
  }
  return Number(id);
}

/** The versions If-Match accepts: undefined for none or `*`; a 412 for tags that match nothing. */
function versionsOf(id: number, ifMatch?: IfMatch): number[] | undefined {
  if (ifMatch === undefined || ifMatch === '*') return undefined;
  if (ifMatch.length === 0) {
    throw new PreconditionFailedError(`Group ${id} has changed: If-Match matches no current ETag`);
  }
  return ifMatch;
}

/** Whether a projection keeps `members` (they are read only then: a group may have many). */
function wantsMembers({ attributes, excludedAttributes }: Projection): boolean {
  const names = (list: string) =>
    list.split(',').map((item) => resolveGroupPath(item.trim())?.attribute.name);
  if (attributes) return names(attributes).includes('members');
  if (excludedAttributes) return !names(excludedAttributes).includes('members');
  return true;
}

/**
 * What a PATCH does, worked out before the write: the fields it sets and, given the members as
 * locked, the changes of the members in order. RFC 7644 §3.5.2 on a Group: `displayName` and
 * `externalId` are set, replaced or (externalId only) removed; `members` are added, replaced,
 * removed all, removed by a value filter (`members[value eq "7"]`), or removed by value (the
 * form Entra ID sends: remove `members` with a value listing them).
 */
interface GroupPatch {
  fields: Partial<GroupFields>;
  /** Whether a value filter needs the current members to pick the ones to remove. */
  readsMembers: boolean;
  changes(members: ScimObject[]): MemberChange[];
}

function planPatch(operations: PatchOperation[]): GroupPatch {
  const fields: Partial<GroupFields> = {};
  const steps: ((members: ScimObject[]) => MemberChange[])[] = [];
  let readsMembers = false;
  const one = (op: PatchOperation['op'], path: string, value: unknown) => {
    const target = targetOf(path, resolveGroupPath);
    const { attribute, sub } = target.resolved;
    if (attribute.name === 'displayName') {
      if (op === 'remove') throw invalidValue('displayName is required: it cannot be removed');
      fields.displayName = displayNameOf(
        checkObject([attribute], { displayName: value }, '', 'Group').displayName,
      );
      return;
    }
    if (attribute.name === 'externalId') {
      fields.externalId =
        op === 'remove'
          ? null
          : externalIdOf(checkObject([attribute], { externalId: value }, '', 'Group').externalId);
      return;
    }
    if (attribute.name !== 'members') {
      throw new ScimError(400, `${path} cannot be changed`, 'mutability');
    }
    if (sub || target.sub) {
      throw new ScimError(400, `${path}: a member is added or removed whole`, 'mutability');
    }
    if (target.filter) {
      if (op !== 'remove') {
        throw new ScimError(
          400,
          `${path}: a value filter selects members to remove`,
          'invalidPath',
        );
      }
      const filter = target.filter;
      readsMembers = true;
      steps.push((members) => [
        {
          kind: 'remove',
          userIds: members
            .filter((member) => matches(member, filter))
            .map(({ value }) => Number(value)),
        },
      ]);
      return;
    }
    if (op === 'remove') {
      const userIds = value === undefined ? undefined : memberIdsOf(value, 'members');
      steps.push(() => [userIds ? { kind: 'remove', userIds } : { kind: 'clear' }]);
      return;
    }
    const userIds = memberIdsOf(value, 'members');
    steps.push(() =>
      op === 'replace' ? [{ kind: 'clear' }, { kind: 'add', userIds }] : [{ kind: 'add', userIds }],
    );
  };
  for (const { op, path, value } of operations) {
    if (path !== undefined) {
      one(op, path, value);
      continue;
    }
    if (op === 'remove') throw new ScimError(400, 'remove needs a path', 'noTarget');
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ScimError(400, `${op} without a path takes an object value`, 'invalidSyntax');
    }
    for (const [key, item] of Object.entries(value)) {
      const resolved = resolveGroupPath(key);
      // schemas, and read-only attributes (Okta sends the id back), are ignored (RFC 7643 §2.2).
      if (key.toLowerCase() === 'schemas' || resolved?.attribute.mutability === 'readOnly')
        continue;
      one(op, key, item);
    }
  }
  return {
    fields,
    readsMembers,
    changes: (members) => steps.flatMap((step) => step(members)),
  };
}

/**
 * SCIM Groups over GroupsRepository: members are users, a change of the members is a change of
 * the group (its version moves on), and the members of one group change one write at a time.
 */
@Injectable()
export class ScimGroupsService {
  constructor(private readonly groups: GroupsRepository) {}

  async findOne(id: string, query: Projection = {}): Promise<ScimObject> {
    const groupId = idOf(id);
    const group = await this.groups.findById(groupId);
    if (!group) throw new NotFoundError(`Group ${id} not found`);
    return project(
      await this.resource(group, query),
      query.attributes,
      query.excludedAttributes,
      resolveGroupPath,
    );
  }

  async create(body: unknown): Promise<ScimObject> {
    const { fields, memberIds } = checkGroupResource(body);
    const group = await this.writing(() => this.groups.create(fields, memberIds));
    return this.resource(group);
  }

  async replace(id: string, body: unknown, ifMatch?: IfMatch): Promise<ScimObject> {
    const groupId = idOf(id);
    const { fields, memberIds } = checkGroupResource(body);
    const group = await this.writing(() =>
      this.groups.write(groupId, fields, versionsOf(groupId, ifMatch), () => [
        { kind: 'clear' },
        { kind: 'add', userIds: memberIds },
      ]),
    );
    return this.resource(group);
  }

  /** All the operations or none, in one transaction holding the group's row. */
  async patch(
    id: string,
    body: unknown,
    ifMatch?: IfMatch,
    query: Projection = {},
  ): Promise<ScimObject> {
    const groupId = idOf(id);
    project({}, query.attributes, query.excludedAttributes, resolveGroupPath);
    const plan = planPatch(parsePatch(body));
    const group = await this.writing(() =>
      this.groups.write(groupId, plan.fields, versionsOf(groupId, ifMatch), async () => {
        if (!plan.readsMembers) return plan.changes([]);
        const members = (await this.groups.membersOf([groupId])).get(groupId) ?? [];
        return plan.changes(
          members.map(({ userId, name }) => ({
            value: String(userId),
            display: name,
            type: 'User',
          })),
        );
      }),
    );
    return project(
      await this.resource(group, query),
      query.attributes,
      query.excludedAttributes,
      resolveGroupPath,
    );
  }

  async remove(id: string, ifMatch?: IfMatch): Promise<void> {
    const groupId = idOf(id);
    await this.groups.delete(groupId, versionsOf(groupId, ifMatch));
  }

  /** A ListResponse: the filter compiled to SQL, an exact totalResults, 1-based startIndex. */
  async findAll(query: ScimListQuery): Promise<ScimObject> {
    // An undeclared attribute is a 400 even when nothing matches.
    project({}, query.attributes, query.excludedAttributes, resolveGroupPath);
    const filter = query.filter === undefined ? undefined : parseFilter(query.filter);
    const { groups, total } = await this.groups.search(
      (column, param) => {
        const storage = new GroupStorageSql(column, this.groups.tables);
        const where = filter ? new FilterCompiler(storage, param).compile(filter) : 'true';
        return { where, orderBy: this.orderBy(storage, query, column('id')) };
      },
      query.startIndex - 1,
      query.count,
    );
    const members = wantsMembers(query)
      ? await this.groups.membersOf(groups.map(({ id }) => id))
      : undefined;
    return {
      schemas: [LIST_RESPONSE],
      totalResults: total,
      startIndex: query.startIndex,
      itemsPerPage: groups.length,
      Resources: groups.map((group) =>
        project(
          toGroupResource(group, members?.get(group.id)),
          query.attributes,
          query.excludedAttributes,
          resolveGroupPath,
        ),
      ),
    };
  }

  private orderBy(storage: GroupStorageSql, query: ScimListQuery, id: string): string {
    if (query.sortBy === undefined) return id;
    const path = storage.resolve(query.sortBy, true);
    if (path.attribute.multiValued) throw invalidValue(`sortBy ${query.sortBy} is multi-valued`);
    const operand = storage.operand(path);
    const key =
      operand.kind === 'text' && !operand.caseExact ? `lower(${operand.sql})` : operand.sql;
    return `${key} ${query.sortOrder === 'descending' ? 'DESC' : 'ASC'}, ${id}`;
  }

  private async resource(group: Group, query: Projection = {}): Promise<ScimObject> {
    if (!wantsMembers(query)) return toGroupResource(group);
    const members = await this.groups.membersOf([group.id]);
    return toGroupResource(group, members.get(group.id));
  }

  /** A member that names no user is the request's error: 400 invalidValue, nothing written. */
  private async writing(write: () => Promise<Group>): Promise<Group> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof UnknownMembersError) {
        throw invalidValue(`members: no user has the id ${error.userIds.join(', ')}`);
      }
      throw error;
    }
  }
}
