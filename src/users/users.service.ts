import { Injectable } from '@nestjs/common';
import { ChangesService } from '../changes/changes.service.js';
import { NotFoundError, PreconditionFailedError } from '../common/errors.js';
import type { ListPage } from '../lists/list-plan.js';
import type { CreateUserDto } from './dto/create-user.dto.js';
import type { ListUsersQueryDto } from './dto/list-users-query.dto.js';
import type { UpdateUserDto } from './dto/update-user.dto.js';
import { DEFAULT_ROLE, type User } from './user.entity.js';
import {
  type ProvisionedUserFields,
  type SearchPlan,
  UsersRepository,
  type UserSummary,
} from './users.repository.js';

/** An If-Match precondition: the versions the caller accepts, or `*` (any existing version). */
export type IfMatch = number[] | '*';

function satisfies(ifMatch: IfMatch | undefined, version: number): boolean {
  return ifMatch === undefined || ifMatch === '*' || ifMatch.includes(version);
}

/** The versions a write may change: undefined for any (no If-Match, or `*`). */
function versionsOf(ifMatch: IfMatch | undefined): number[] | undefined {
  return Array.isArray(ifMatch) ? ifMatch : undefined;
}

const changed = (id: number) =>
  new PreconditionFailedError(`user ${id} has changed: If-Match matches no current ETag`);

const notFound = (id: number) => new NotFoundError(`user ${id} not found`);

@Injectable()
export class UsersService {
  constructor(
    private readonly users: UsersRepository,
    private readonly changes: ChangesService,
  ) {}

  /** A page of users, with the change feed's token of the page's own snapshot. */
  async findAll(query: ListUsersQueryDto): Promise<ListPage<User>> {
    const { snapshotValue, ...page } = await this.users.findPage(query, this.changes.listSql);
    return { ...page, changesToken: this.changes.listToken(snapshotValue!) };
  }

  async findOne(id: number): Promise<User> {
    const user = await this.users.findById(id);
    if (!user) throw notFound(id);
    return user;
  }

  /** A user's id and name (what gRPC's GetUser returns), or NotFoundError. */
  async findSummary(id: number): Promise<UserSummary> {
    const user = await this.users.findSummaryById(id);
    if (!user) throw notFound(id);
    return user;
  }

  /** Throws NotFoundError unless the user exists. */
  async assertExists(id: number): Promise<void> {
    if (!(await this.users.exists(id))) throw notFound(id);
  }

  create(dto: CreateUserDto): Promise<User> {
    return this.users.insert({
      name: dto.name,
      email: dto.email ?? null,
      role: dto.role ?? DEFAULT_ROLE,
    });
  }

  /** A user created by an identity provider (SCIM), with the fields only it sets. */
  provision(fields: ProvisionedUserFields): Promise<User> {
    return this.users.insertProvisioned(fields);
  }

  /** A page of the users a plan selects, and their exact number (SCIM queries). */
  search(plan: SearchPlan, offset: number, limit: number) {
    return this.users.search(plan, offset, limit);
  }

  /** PUT: a full replacement; absent optional fields go back to their defaults. */
  replace(id: number, dto: CreateUserDto, ifMatch?: IfMatch): Promise<User> {
    return this.update(
      id,
      { name: dto.name, email: dto.email ?? null, role: dto.role ?? DEFAULT_ROLE },
      ifMatch,
    );
  }

  /**
   * PATCH: only the given fields change; an empty change leaves the row, updatedAt and version
   * included, alone. With `ifMatch`, the write happens only if the current version is accepted.
   */
  async update(
    id: number,
    dto: UpdateUserDto | Partial<ProvisionedUserFields>,
    ifMatch?: IfMatch,
  ): Promise<User> {
    const changes = Object.fromEntries(
      Object.entries(dto).filter(([, value]) => value !== undefined),
    ) as Partial<User>;
    if (Object.keys(changes).length === 0) {
      const user = await this.findOne(id);
      if (!satisfies(ifMatch, user.version)) throw changed(id);
      return user;
    }
    if (Array.isArray(ifMatch) && ifMatch.length === 0) return this.failPrecondition(id);
    const user = await this.users.update(id, changes, versionsOf(ifMatch));
    return user ?? this.failPrecondition(id);
  }

  async remove(id: number, ifMatch?: IfMatch): Promise<void> {
    if (Array.isArray(ifMatch) && ifMatch.length === 0) return this.failPrecondition(id);
    if (!(await this.users.delete(id, versionsOf(ifMatch)))) return this.failPrecondition(id);
  }

  /** After a write that matched no row: 404 when the user is gone, else its version moved on. */
  private async failPrecondition(id: number): Promise<never> {
    await this.assertExists(id);
    throw changed(id);
  }
}
