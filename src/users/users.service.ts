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
const SELECT_USER = `SELECT id, name, email, role, created_at AS "createdAt", updated_at AS "updatedAt" FROM users`;

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

  async create(dto: CreateUserDto): Promise<User> {
    const user = this.users.create({
      name: dto.name,
      email: dto.email ?? null,
      role: dto.role ?? DEFAULT_ROLE,
    });
    return this.saving(() => this.users.save(user), dto.email);
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
    const changes: Partial<User> = {};
    if (dto.name !== undefined) changes.name = dto.name;
    if (dto.email !== undefined) changes.email = dto.email;
    if (dto.role !== undefined) changes.role = dto.role;
    if (Object.keys(changes).length === 0) return this.findOne(id);

    const { affected } = await this.saving(() => this.users.update({ id }, changes), dto.email);
    if (!affected) throw new NotFoundError(`user ${id} not found`);
    return this.findOne(id);
  }

  async remove(id: number): Promise<void> {
    // The posts of the user go with it: the foreign key is ON DELETE CASCADE.
    const { affected } = await this.users.delete({ id });
    if (!affected) throw new NotFoundError(`user ${id} not found`);
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
