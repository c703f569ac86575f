import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type FindOptionsWhere, In, type Repository, type UpdateQueryBuilder } from 'typeorm';
import { ConflictError } from '../common/errors.js';
import { BatchedLookup } from '../database/batched-lookup.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { EntitySql } from '../database/entity-sql.js';
import { PrimaryPool } from '../database/queryable.js';
import { ReadReplicas } from '../database/read-replicas.js';
import { reads, type ReadStatement } from '../database/statement.js';
import { TransactionScope } from '../database/transaction-scope.js';
import { ListCounts, listCountKey } from '../lists/list-counts.js';
import { ListPlan, type ListPage } from '../lists/list-plan.js';
import type { ListUsersQueryDto, UserSortField } from './dto/list-users-query.dto.js';
import { User } from './user.entity.js';

const EMAIL_INDEX = 'users_email_lower_key';
const USER_NAME_INDEX = 'users_user_name_lower_key';

/** The columns a create or an update writes. */
export type UserFields = Pick<User, 'name' | 'email' | 'role'>;

/** The columns a SCIM create or replace writes (src/scim; role keeps its default or value). */
export type ProvisionedUserFields = Pick<
  User,
  'name' | 'email' | 'userName' | 'active' | 'externalId' | 'scimAttributes'
>;
const PROVISIONED: (keyof ProvisionedUserFields)[] = [
  'name',
  'email',
  'userName',
  'active',
  'externalId',
  'scimAttributes',
];

/**
 * A query's condition and order, written with the table's columns and the statement's
 * placeholders, and `also`: more values to read with each row, by name (a SQL expression each).
 */
export type SearchPlan = (
  column: (property: keyof User) => string,
  param: (value: unknown) => string,
) => {
  /**
   * Where the users come from instead of the table: a set-returning function of the database
   * whose rows are users (`"users_with_user_name"($1)`), read under the table's name.
   */
  source?: string;
  /** The condition; none for all the users (of the source). */
  where?: string;
  /** None when the condition matches at most one user. */
  orderBy?: string;
  also?: Record<string, string>;
};

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
  private readonly selectById: ReadStatement;
  private readonly selectSummaryById: ReadStatement;
  /** Summaries looked up in the same turn of the event loop, one statement for all (gRPC). */
  private readonly summaries: BatchedLookup<number, UserSummary>;
  private readonly existsById: ReadStatement;
  private readonly insertRow: string;
  private readonly insertProvisionedRow: string;
  private readonly list: ListPlan<User, UserSortField>;

  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    private readonly scope: TransactionScope,
    private readonly primary: PrimaryPool,
    private readonly replicas: ReadReplicas,
    counts: ListCounts,
  ) {
    this.sql = new EntitySql(users);
    this.selectById = reads(
      `SELECT ${this.sql.selectList} FROM ${this.sql.table} WHERE ${this.sql.column('id')} = $1`,
    );
    this.selectSummaryById = reads(
      `SELECT ${this.sql.select(SUMMARY_FIELDS)} FROM ${this.sql.table} WHERE ${this.sql.column('id')} = $1`,
    );
    const selectSummariesByIds = reads(
      `SELECT ${this.sql.select(SUMMARY_FIELDS)} FROM ${this.sql.table} WHERE ${this.sql.column('id')} = ANY($1)`,
    );
    this.summaries = new BatchedLookup(
      (ids) => this.primary.query<UserSummary>(selectSummariesByIds, [ids]),
      (row) => row.id,
    );
    this.existsById = reads(`SELECT 1 FROM ${this.sql.table} WHERE ${this.sql.column('id')} = $1`);
    this.insertRow = this.sql.insert(['name', 'email', 'role']);
    this.insertProvisionedRow = this.sql.insert(PROVISIONED);
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
    const { role, active } = query;
    const filters = new URLSearchParams();
    if (role !== undefined) filters.set('role', role);
    if (active !== undefined) filters.set('active', active);
    return this.replicas.onOneServer((db) =>
      this.list.fetch(db, query, {
        scope: filters.size === 0 ? 'users' : `users?${filters.toString()}`,
        filters: (param) => [
          ...(role === undefined ? [] : [`${this.sql.column('role')} = ${param(role)}`]),
          ...(active === undefined
            ? []
            : [`${this.sql.column('active')} = ${param(active === 'true')}`]),
        ],
        countKey: listCountKey.users(role, active === undefined ? undefined : active === 'true'),
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
      { email, userName: email ?? undefined },
    );
    return this.sql.toEntity(row);
  }

  /** One INSERT … RETURNING of a provisioned user. Throws ConflictError on a taken email or userName. */
  async insertProvisioned(fields: ProvisionedUserFields): Promise<User> {
    const values = PROVISIONED.map((property) =>
      property === 'scimAttributes' ? JSON.stringify(fields[property]) : fields[property],
    );
    const [row] = await this.saving(
      () => this.scope.queryable().query(this.insertProvisionedRow, values),
      fields,
    );
    return this.sql.toEntity(row);
  }

  /**
   * The users a plan's condition selects, in its order, `limit` of them after `offset`, how many
   * it selects in all (exact), and for each user the plan's `also` values. On the primary: a
   * provider reads what it has just written. A page shorter than `limit` ends the list, and
   * tells the total: no count is sent (a provider's look-up by userName is one statement).
   */
  async search(
    plan: SearchPlan,
    offset: number,
    limit: number,
  ): Promise<{ users: User[]; total: number; also: Record<string, unknown>[] }> {
    const params: unknown[] = [];
    // Columns qualified by the table: a condition's subquery (a user's groups) has an id of its own.
    const {
      source,
      where,
      orderBy,
      also = {},
    } = plan(
      (property) => `${this.sql.table}.${this.sql.column(property)}`,
      (value) => `$${params.push(value)}`,
    );
    const db = this.scope.queryable();
    const table = source ? `${source} AS ${this.sql.table}` : this.sql.table;
    const from = `FROM ${table}${where ? ` WHERE ${where}` : ''}`;
    const count = async () =>
      (
        await db.query<{ total: number }>(reads(`SELECT count(*)::int AS "total" ${from}`), params)
      )[0].total;
    if (limit === 0) return { users: [], total: await count(), also: [] };
    const names = Object.keys(also);
    const extra = names.map((name) => `, ${also[name]} AS "${name}"`).join('');
    const rows = await db.query(
      reads(
        `SELECT ${this.sql.selectList}${extra} ${from}${orderBy ? ` ORDER BY ${orderBy}` : ''} LIMIT ${limit} OFFSET ${offset}`,
      ),
      params,
    );
    // A page that is not full ends the list: its rows tell the total, unless it is past the end.
    const ended = rows.length < limit && (rows.length > 0 || offset === 0);
    const total = ended ? offset + rows.length : await count();
    return {
      users: rows.map((row) => this.sql.toEntity(omit(row, names))),
      total,
      also: rows.map((row) => Object.fromEntries(names.map((name) => [name, row[name]]))),
    };
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
      // A jsonb column's value is an object TypeORM's types take for a nested entity.
      .set(changes as Parameters<UpdateQueryBuilder<User>['set']>[0])
      .where(versionedWhere(id, versions))
      .returning(this.sql.selectList)
      .getQueryAndParameters();
    const [row] = await this.saving(() => this.scope.queryable().query(sql, parameters), changes);
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

  /**
   * Maps a violation of a case-insensitive unique index (email, userName) to a ConflictError. A
   * user created without a userName gets its email as one, which another user may hold already.
   */
  private async saving<T>(write: () => Promise<T>, written: Partial<User>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error, EMAIL_INDEX)) {
        throw new ConflictError(`email ${written.email} is already used by another user`);
      }
      if (isUniqueViolation(error, USER_NAME_INDEX)) {
        throw new ConflictError(`userName ${written.userName} is already used by another user`);
      }
      throw error;
    }
  }
}

function versionedWhere(id: number, versions?: number[]): FindOptionsWhere<User> {
  return versions ? { id, version: In(versions) } : { id };
}

/** A row without the named values. */
function omit(row: Record<string, unknown>, names: string[]): Record<string, unknown> {
  if (names.length === 0) return row;
  const rest = { ...row };
  for (const name of names) delete rest[name];
  return rest;
}
