import { Injectable } from '@nestjs/common';
import { NotFoundError, PreconditionFailedError } from '../common/errors.js';
import { MAX_ID } from '../common/patterns.js';
import { GroupsRepository } from '../groups/groups.repository.js';
import type { User } from '../users/user.entity.js';
import type { IfMatch } from '../users/users.service.js';
import { UsersService } from '../users/users.service.js';
import { FilterCompiler, matchesOne, parseFilter } from './scim-filter.js';
import type { ScimListQuery } from './scim-list-query.js';
import { applyPatch, parsePatch } from './scim-patch.js';
import { CORE_USER, ENTERPRISE_USER, LIST_RESPONSE } from './scim-schema.js';
import {
  checkUserResource,
  project,
  type ScimObject,
  toUserFields,
  toUserResource,
} from './scim-user-resource.js';
import { type ColumnOf, UserStorageSql } from './scim-user-storage.js';
import { invalidValue } from './scim-error.js';

/** A PATCH that lost a race with another writer reads the user again, this many times at most. */
const PATCH_ATTEMPTS = 5;

/** A SCIM id: the REST id as a string; anything else names no user. */
function idOf(id: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(id) || Number(id) > MAX_ID) {
    throw new NotFoundError(`User ${id} not found`);
  }
  return Number(id);
}

/**
 * SCIM Users over UsersService: the same table, versions, change feed and uniqueness. A user's
 * `groups` are read from the groups' members (GroupsRepository); they change with those.
 */
@Injectable()
export class ScimUsersService {
  constructor(
    private readonly users: UsersService,
    private readonly groups: GroupsRepository,
  ) {}

  async findOne(id: string, query: Pick<ScimListQuery, 'attributes' | 'excludedAttributes'> = {}) {
    const user = await this.users.findOne(idOf(id));
    return project(await this.resource(user), query.attributes, query.excludedAttributes);
  }

  async create(body: unknown): Promise<ScimObject> {
    return toUserResource(await this.users.provision(toUserFields(checkUserResource(body))));
  }

  async replace(id: string, body: unknown, ifMatch?: IfMatch): Promise<ScimObject> {
    const fields = toUserFields(checkUserResource(body));
    return this.resource(await this.users.update(idOf(id), fields, ifMatch));
  }

  /** The SCIM User of a user, with its groups. */
  private async resource(user: User): Promise<ScimObject> {
    return toUserResource(user, await this.groups.groupsOf(user.id));
  }

  /**
   * Applies the operations to the user as read, checks the result as a whole, and writes it only
   * if the user is still at the version read: all the operations or none, and no concurrent
   * change lost (a lost race reads the user again).
   */
  async patch(id: string, body: unknown, ifMatch?: IfMatch): Promise<ScimObject> {
    const operations = parsePatch(body);
    const userId = idOf(id);
    for (let attempt = 1; ; attempt++) {
      const user = await this.users.findOne(userId);
      if (Array.isArray(ifMatch) && !ifMatch.includes(user.version)) {
        throw new PreconditionFailedError(
          `User ${id} has changed: If-Match matches no current ETag`,
        );
      }
      const patched = applyPatch(await this.resource(user), operations);
      patched.schemas = patched[ENTERPRISE_USER] ? [CORE_USER, ENTERPRISE_USER] : [CORE_USER];
      const fields = toUserFields(checkUserResource(patched));
      try {
        return await this.resource(await this.users.update(userId, fields, [user.version]));
      } catch (error) {
        if (!(error instanceof PreconditionFailedError) || attempt === PATCH_ATTEMPTS) throw error;
      }
    }
  }

  remove(id: string, ifMatch?: IfMatch): Promise<void> {
    return this.users.remove(idOf(id), ifMatch);
  }

  /** A ListResponse: the filter compiled to SQL, an exact totalResults, 1-based startIndex. */
  async findAll(query: ScimListQuery): Promise<ScimObject> {
    // An undeclared attribute is a 400 even when nothing matches.
    project({}, query.attributes, query.excludedAttributes);
    const filter = query.filter === undefined ? undefined : parseFilter(query.filter);
    const { users, total, also } = await this.users.search(
      (column, param) => {
        const storage = new UserStorageSql(column, this.groups.tables);
        // A provider's look-up by userName or externalId reads through the database's function.
        const source = storage.lookup(filter, param);
        const where =
          filter && !source ? new FilterCompiler(storage, param).compile(filter) : undefined;
        return {
          source,
          where,
          orderBy: matchesOne(filter, storage) ? undefined : this.orderBy(storage, query, column),
          // Each user's groups, read in the page's statement.
          also: { groups: this.groups.membershipsSql(column('id')) },
        };
      },
      query.startIndex - 1,
      query.count,
    );
    return {
      schemas: [LIST_RESPONSE],
      totalResults: total,
      startIndex: query.startIndex,
      itemsPerPage: users.length,
      Resources: users.map((user, index) =>
        project(
          toUserResource(user, this.groups.membershipsOf(also[index].groups)),
          query.attributes,
          query.excludedAttributes,
        ),
      ),
    };
  }

  private orderBy(storage: UserStorageSql, query: ScimListQuery, column: ColumnOf): string {
    if (query.sortBy === undefined) return column('id');
    const path = storage.resolve(query.sortBy, true);
    const emails = path.attribute.name === 'emails' && !path.extension;
    if (path.attribute.multiValued && !emails) {
      throw invalidValue(`sortBy ${query.sortBy} is multi-valued`);
    }
    // A multi-valued attribute sorts by its primary value (RFC 7644 §3.4.2.3): the REST email.
    const operand = emails
      ? { sql: column('email'), caseExact: false, kind: 'text' as const }
      : storage.operand(path);
    const key =
      operand.kind === 'text' && !operand.caseExact ? `lower(${operand.sql})` : operand.sql;
    const direction = query.sortOrder === 'descending' ? 'DESC' : 'ASC';
    return `${key} ${direction}, ${column('id')}`;
  }
}
