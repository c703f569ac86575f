import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, type FindOptionsWhere, In, type Repository } from 'typeorm';
import { isUniqueViolation } from '../database/database-errors.js';
import { ConflictError, NotFoundError, PreconditionFailedError } from '../common/errors.js';
import { ListPlan, type ListPage } from '../lists/pagination.js';
import { EntitySql } from '../database/entity-sql.js';
import { PrimaryPool } from '../database/queryable.js';
import { ReadReplicas } from '../database/read-replicas.js';
import { ListCounts, listCountKey } from '../lists/list-counts.js';
import { CreateUserDto } from './dto/create-user.dto.js';
import { ListUsersQueryDto, type UserSortField } from './dto/list-users-query.dto.js';
import { UpdateUserDto } from './dto/update-user.dto.js';
import { DEFAULT_ROLE, User } from './user.entity.js';

const EMAIL_INDEX = 'users_email_lower_key';

/** An If-Match precondition: the versions the caller accepts, or `*` (any existing version). */
export type IfMatch = number[] | '*';

function satisfies(ifMatch: IfMatch | undefined, version: number): boolean {
  return ifMatch === undefined || ifMatch === '*' || ifMatch.includes(version);
}

function versionedWhere(id: number, ifMatch: IfMatch | undefined): FindOptionsWhere<User> {
  return Array.isArray(ifMatch) ? { id, version: In(ifMatch) } : { id };
}

const changed = (id: number) =>
  new PreconditionFailedError(`user ${id} has changed: If-Match matches no current ETag`);

@Injectable()
export class UsersService {
  // The hot reads (GET /users, GET /users/:id, gRPC GetUser) run SQL generated once from the
  // entity's metadata: building it per request through the query builder cost more than the query.
  private readonly sql: EntitySql<User>;
  private readonly selectById: string;
  private readonly existsById: string;
  private readonly insert: string;
  private readonly list: ListPlan<User, UserSortField>;

  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    private readonly primary: PrimaryPool,
    private readonly replicas: ReadReplicas,
    counts: ListCounts,
  ) {
    this.sql = new EntitySql(users);
    this.selectById = `SELECT ${this.sql.selectList} FROM ${this.sql.table} WHERE ${this.sql.column('id')} = $1`;
    this.existsById = `SELECT 1 FROM ${this.sql.table} WHERE ${this.sql.column('id')} = $1`;
    this.insert = this.sql.insert(['name', 'email', 'role']);
    this.list = new ListPlan(
      this.sql,
      {
        id: 'id',
        name: 'name',
        email: 'email',
        role: 'role',
        createdAt: 'createdAt',
        updatedAt: 'updatedAt',
      },
      counts,
    );
  }

  /** Reads from a replica when DATABASE_READ_URLS is set: the page and its total may lag. */
  async findAll(query: ListUsersQueryDto): Promise<ListPage<User>> {
    const { role } = query;
    return this.list.fetch(this.replicas.reader(), query, {
      scope: role === undefined ? 'users' : `users?role=${role}`,
      filters: (param) =>
        role === undefined ? [] : [`${this.sql.column('role')} = ${param(role)}`],
      countKey: listCountKey.users(role),
    });
  }

  async findOne(id: number): Promise<User> {
    const [row] = await this.primary.query<User>(this.selectById, [id]);
    if (!row) throw new NotFoundError(`user ${id} not found`);
    return this.sql.toEntity(row);
  }

  /** Throws NotFoundError unless the user exists. */
  async assertExists(id: number): Promise<void> {
    const rows = await this.primary.query(this.existsById, [id]);
    if (rows.length === 0) throw new NotFoundError(`user ${id} not found`);
  }

  /**
   * One INSERT … RETURNING (generated once from the entity): no transaction round trips around a
   * single statement, and no query builder per request.
   * @param manager the transaction to create it in (an idempotent create), else none
   */
  async create(dto: CreateUserDto, manager?: EntityManager): Promise<User> {
    const values = [dto.name, dto.email ?? null, dto.role ?? DEFAULT_ROLE];
    const [row] = await this.saving(
      () => this.primary.within(manager).query<User>(this.insert, values),
      dto.email,
    );
    return this.sql.toEntity(row);
  }

  /** PUT: a full replacement; absent optional fields go back to their defaults. */
  async replace(id: number, dto: CreateUserDto, ifMatch?: IfMatch): Promise<User> {
    return this.update(
      id,
      { name: dto.name, email: dto.email ?? null, role: dto.role ?? DEFAULT_ROLE },
      ifMatch,
    );
  }

  /**
   * PATCH: only the given fields change, in one UPDATE … RETURNING (TypeORM sets updatedAt from
   * the entity's @UpdateDateColumn; the database increments version); an empty change leaves the
   * row, updatedAt and version included, alone. With `ifMatch`, the versions the caller accepts
   * are part of the UPDATE's WHERE, so the check and the write are one atomic step.
   */
  async update(id: number, dto: UpdateUserDto, ifMatch?: IfMatch): Promise<User> {
    const changes = Object.fromEntries(
      Object.entries(dto).filter(([, value]) => value !== undefined),
    ) as Partial<User>;
    if (Object.keys(changes).length === 0) {
      const user = await this.findOne(id);
      if (!satisfies(ifMatch, user.version)) throw changed(id);
      return user;
    }
    if (Array.isArray(ifMatch) && ifMatch.length === 0) return this.failPrecondition(id);

    const result = await this.saving(
      () =>
        this.users
          .createQueryBuilder()
          .update()
          .set(changes)
          .where(versionedWhere(id, ifMatch))
          .returning(this.sql.selectList)
          .updateEntity(false)
          .execute(),
      dto.email,
    );
    const [row] = result.raw as User[];
    if (!row) return this.failPrecondition(id);
    return this.sql.toEntity(row);
  }

  async remove(id: number, ifMatch?: IfMatch): Promise<void> {
    if (Array.isArray(ifMatch) && ifMatch.length === 0) return this.failPrecondition(id);
    // The posts of the user go with it: the foreign key is ON DELETE CASCADE.
    const { affected } = await this.users
      .createQueryBuilder()
      .delete()
      .where(versionedWhere(id, ifMatch))
      .execute();
    if (affected === 0) return this.failPrecondition(id);
  }

  /** After a write that matched no row: 404 when the user is gone, else its version moved on. */
  private async failPrecondition(id: number): Promise<never> {
    await this.assertExists(id);
    throw changed(id);
  }

  /** Maps a violation of the case-insensitive unique email index to a ConflictError. */
  private async saving<T>(write: () => Promise<T>, email: string | null | undefined): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error, EMAIL_INDEX)) {
        throw new ConflictError(`email ${email} is already used by another user`);
      }
      throw error;
    }
  }
}
