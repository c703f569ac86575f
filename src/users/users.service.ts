import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUniqueViolation } from '../common/database-errors.js';
import { ConflictError, NotFoundError } from '../common/errors.js';
import type { ListQuery, ListSpec, Page } from '../common/list-query.js';
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

@Injectable()
export class UsersService {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  async findAll({ page, limit, sort, filters }: UserListQuery): Promise<Page<User>> {
    const query = this.users.createQueryBuilder('user');
    if (filters.role !== undefined) query.where('user.role = :role', { role: filters.role });
    // Sort fields come from the allow-list only; `id` breaks ties so pages never overlap.
    for (const { field, direction } of sort) query.addOrderBy(`user.${field}`, direction);
    if (!sort.some(({ field }) => field === 'id')) query.addOrderBy('user.id', 'ASC');
    const [items, total] = await Promise.all([
      query
        .clone()
        .offset((page - 1) * limit)
        .limit(limit)
        .getMany(),
      query.getCount(),
    ]);
    return { items, total };
  }

  async findOne(id: number): Promise<User> {
    const user = await this.users.findOneBy({ id });
    if (!user) throw new NotFoundError(`user ${id} not found`);
    return user;
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
