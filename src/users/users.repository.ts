import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type FindOptionsWhere, In, type Repository } from 'typeorm';
import { ConflictError } from '../common/errors.js';
import { BatchedLookup } from '../database/batched-lookup.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { EntitySql } from '../database/entity-sql.js';
import { PrimaryPool } from '../database/queryable.js';
import { ReadReplicas } from '../database/read-replicas.js';
import { TransactionScope } from '../database/transaction-scope.js';
import { ListCounts, listCountKey } from '../lists/list-counts.js';
import { ListPlan, type ListPage } from '../lists/list-plan.js';
import type { ListUsersQueryDto, UserSortField } from './dto/list-users-query.dto.js';
import { User } from './user.entity.js';

const EMAIL_INDEX = 'users_email_lower_key';

/** The columns a create or an update writes. */
export type UserFields = Pick<User, 'name' | 'email' | 'role'>;

/** What gRPC's GetUser returns of a user (no email, by contract). */
export type UserSummary = Pick<User, 'id' | 'name'>;
const SUMMARY_FIELDS: (keyof UserSummary)[] = ['id', 'name'];

/**
 * Every statement on `users`. The hot ones (by id, the list, the insert) are generated once from
 * the entity's metadata: building them per request through the query builder cost more than the
 * query. A statement joins the open transaction (TransactionScope) when there is one; a write
 * without one commits by itself, and the database client never lets its timeout cut that commit
 * short (src/database/database-client.ts).
 */
@Injectable()
export class UsersRepository {
  private readonly sql: EntitySql<User>;
  private readonly selectById: string;
  private readonly selectSummaryById: string;
  /** Summaries looked up in the same turn of the event loop, one statement for all (gRPC). */
  private readonly summaries: BatchedLookup<number, UserSummary>;
  private readonly existsById: string;
  private readonly insertRow: string;
  private readonly list: ListPlan<User, UserSortField>;

  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    private readonly scope: TransactionScope,
    private readonly primary: PrimaryPool,
    private readonly replicas: ReadReplicas,
    counts: ListCounts,
  ) {
    this.sql = new EntitySql(users);
    this.selectById = `SELECT ${this.sql.selectList} FROM ${this.sql.table} WHERE ${this.sql.column('id')} = $1`;
    this.selectSummaryById = `SELECT ${this.sql.select(SUMMARY_FIELDS)} FROM ${this.sql.table} WHERE ${this.sql.column('id')} = $1`;
    const selectSummariesByIds = `SELECT ${this.sql.select(SUMMARY_FIELDS)} FROM ${this.sql.table} WHERE ${this.sql.column('id')} = ANY($1)`;
    this.summaries = new BatchedLookup(
      (ids) => this.primary.query<UserSummary>(selectSummariesByIds, [ids]),
      (row) => row.id,
    );
    this.existsById = `SELECT 1 FROM ${this.sql.table} WHERE ${this.sql.column('id')} = $1`;
    this.insertRow = this.sql.insert(['name', 'email', 'role']);
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

  /**
   * Read from a replica when DATABASE_READ_URLS is set: the page and its total may lag. The page
   * comes with `feedSql`'s value (`snapshotValue`), read in the same statement and so on the same
   * server: where the change feed stood when the page was read.
   */
  async findPage(query: ListUsersQueryDto, feedSql: string): Promise<ListPage<User>> {
    const { role } = query;
    return this.replicas.onOneServer((db) =>
      this.list.fetch(db, query, {
        scope: role === undefined ? 'users' : `users?role=${role}`,
        filters: (param) =>
          role === undefined ? [] : [`${this.sql.column('role')} = ${param(role)}`],
        countKey: listCountKey.users(role),
        snapshotValue: feedSql,
      }),
    );
  }

  async findById(id: number): Promise<User | undefined> {
    const [row] = await this.scope.queryable().query(this.selectById, [id]);
    return row && this.sql.toEntity(row);
  }

  /**
   * The summary's columns only, as a plain row: no entity to build, no timestamps to parse.
   * Outside a transaction, the summaries asked for in the same turn of the event loop are read by
   * one statement (BatchedLookup); inside one, by a statement of the transaction's own.
   */
  async findSummaryById(id: number): Promise<UserSummary | undefined> {
    if (!this.scope.inTransaction()) return this.summaries.find(id);
    const [row] = await this.scope.queryable().query(this.selectSummaryById, [id]);
    return row as UserSummary | undefined;
  }

  async exists(id: number): Promise<boolean> {
    const rows = await this.scope.queryable().query(this.existsById, [id]);
    return rows.length > 0;
  }

  /** One INSERT … RETURNING. Throws ConflictError when the email is taken. */
  async insert({ name, email, role }: UserFields): Promise<User> {
    const [row] = await this.saving(
      () => this.scope.queryable().query(this.insertRow, [name, email, role]),
      email,
    );
    return this.sql.toEntity(row);
  }

  /**
   * One UPDATE … RETURNING of the given fields (TypeORM sets updatedAt from the entity's
   * @UpdateDateColumn; the database increments version). With `versions`, the row changes only if
   * its version is one of them: the check and the write are one atomic step.
   * @returns the updated user, or undefined when no row matched
   */
  async update(id: number, changes: Partial<User>, versions?: number[]): Promise<User | undefined> {
    const [sql, parameters] = this.users
      .createQueryBuilder()
      .update()
      .set(changes)
      .where(versionedWhere(id, versions))
      .returning(this.sql.selectList)
      .getQueryAndParameters();
    const [row] = await this.saving(
      () => this.scope.queryable().query(sql, parameters),
      changes.email,
    );
    return row && this.sql.toEntity(row);
  }

  /**
   * Deletes the user, and with it their posts (the foreign key is ON DELETE CASCADE).
   * @returns false when no row matched (gone, or its version not one of `versions`)
   */
  async delete(id: number, versions?: number[]): Promise<boolean> {
    const [sql, parameters] = this.users
      .createQueryBuilder()
      .delete()
      .where(versionedWhere(id, versions))
      .returning(this.sql.column('id'))
      .getQueryAndParameters();
    const rows = await this.scope.queryable().query(sql, parameters);
    return rows.length > 0;
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

function versionedWhere(id: number, versions?: number[]): FindOptionsWhere<User> {
  return versions ? { id, version: In(versions) } : { id };
}
