import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUniqueViolation } from '../common/database-errors.js';
import { ConflictError, NotFoundError } from '../common/errors.js';
import type { ListQuery, ListSpec, Page } from '../common/list-query.js';
import { orderBy, totalFromPage } from '../common/sql.js';
import { CreateUserDto, ROLE_MESSAGE, ROLE_PATTERN } from './dto/create-user.dto.js';
import { UpdateUserDto } from './dto/update-user.dto.js';
import { DEFAULT_ROLE, User } from './user.entity.js';

export const USER_SORT_FIELDS = ['id', 'name', 'email', 'role', 'createdAt', 'updatedAt'] as const;
export type UserSortField = (typeof USER_SORT_FIELDS)[number];

export const USER_LIST_SPEC: ListSpec<UserSortField, 'role'> = {
  sortFields: USER_SORT_FIELDS,
  filters: { role: { pattern: ROLE_PATTERN, message: ROLE_MESSAGE } },
};

export type UserListQuery = ListQuery<UserSortField, 'role'>;

const EMAIL_INDEX = 'users_email_lower_key';

const COLUMNS: Record<UserSortField, string> = {
  id: 'id',
  name: 'name',
  email: 'email',
  role: 'role',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
};
const USER_FIELDS = `id, name, email, role, created_at AS "createdAt", updated_at AS "updatedAt"`;
const SELECT_USER = `SELECT ${USER_FIELDS} FROM users`;

@Injectable()
export class UsersService {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  // The reads below are the hot paths (GET /users, GET /users/:id, gRPC GetUser): plain
  // parameterised SQL through the repository, without building a query per request.

  async findAll({ page, limit, sort, filters }: UserListQuery): Promise<Page<User>> {
    const where = filters.role === undefined ? '' : 'WHERE role = $1';
    const params = filters.role === undefined ? [] : [filters.role];
    const items: User[] = await this.users.query(
      `${SELECT_USER} ${where} ${orderBy(sort, COLUMNS)} LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
      params,
    );
    const total =
      totalFromPage(page, limit, items.length) ??
      (await this.users.query(`SELECT count(*)::int AS total FROM users ${where}`, params))[0]
        .total;
    return { items, total };
  }

  async findOne(id: number): Promise<User> {
    const [user]: User[] = await this.users.query(`${SELECT_USER} WHERE id = $1`, [id]);
    if (!user) throw new NotFoundError(`user ${id} not found`);
    return user;
  }

  /** Throws NotFoundError unless the user exists. */
  async assertExists(id: number): Promise<void> {
    const rows: unknown[] = await this.users.query('SELECT 1 FROM users WHERE id = $1', [id]);
    if (rows.length === 0) throw new NotFoundError(`user ${id} not found`);
  }

  /** One INSERT … RETURNING: no transaction round trips around a single statement. */
  async create(dto: CreateUserDto): Promise<User> {
    const [user]: User[] = await this.saving(
      () =>
        this.users.query(
          `INSERT INTO users (name, email, role) VALUES ($1, $2, $3) RETURNING ${USER_FIELDS}`,
          [dto.name, dto.email ?? null, dto.role ?? DEFAULT_ROLE],
        ),
      dto.email,
    );
    return user;
  }

  /** PUT: a full replacement; absent optional fields go back to their defaults. */
  async replace(id: number, dto: CreateUserDto): Promise<User> {
    return this.update(id, {
      name: dto.name,
      email: dto.email ?? null,
      role: dto.role ?? DEFAULT_ROLE,
    });
  }

  /** PATCH: only the given fields change; an empty change leaves the row (and updatedAt) alone. */
  async update(id: number, dto: UpdateUserDto): Promise<User> {
    // Column names come from this fixed list, values are parameters.
    const changes = (['name', 'email', 'role'] as const).filter(
      (field) => dto[field] !== undefined,
    );
    if (changes.length === 0) return this.findOne(id);

    const assignments = changes.map((field, i) => `${field} = $${i + 2}`).join(', ');
    // For UPDATE and DELETE, TypeORM's query() answers [rows, rowCount].
    const [[user]]: [User[], number] = await this.saving(
      () =>
        this.users.query(
          `UPDATE users SET ${assignments}, updated_at = now() WHERE id = $1 RETURNING ${USER_FIELDS}`,
          [id, ...changes.map((field) => dto[field])],
        ),
      dto.email,
    );
    if (!user) throw new NotFoundError(`user ${id} not found`);
    return user;
  }

  async remove(id: number): Promise<void> {
    // The posts of the user go with it: the foreign key is ON DELETE CASCADE.
    const [, deleted]: [unknown[], number] = await this.users.query(
      'DELETE FROM users WHERE id = $1',
      [id],
    );
    if (deleted === 0) throw new NotFoundError(`user ${id} not found`);
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
