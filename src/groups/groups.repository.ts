import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { NotFoundError, PreconditionFailedError } from '../common/errors.js';
import { KeyedQueue } from '../common/keyed-queue.js';
import { isForeignKeyViolation } from '../database/database-errors.js';
import { EntitySql } from '../database/entity-sql.js';
import { reads } from '../database/statement.js';
import { TransactionScope } from '../database/transaction-scope.js';
import { User } from '../users/user.entity.js';
import { GroupMember } from './group-member.entity.js';
import { Group } from './group.entity.js';

/** The columns a create or a write sets of a group. */
export type GroupFields = Pick<Group, 'displayName' | 'externalId'>;

/** One user in a group, with the name it is shown by. */
export interface Member {
  userId: number;
  name: string;
}

/** One group of a user, with the name it is shown by. */
export interface Membership {
  groupId: number;
  displayName: string;
}

/**
 * A change of a group's members, applied in order in the write's transaction:
 * `add` (a member already in stays), `remove` (one not in is no error), `clear` (every member).
 */
export type MemberChange =
  { kind: 'add'; userIds: number[] } | { kind: 'remove'; userIds: number[] } | { kind: 'clear' };

/** The tables of groups and their members, for the SQL of queries over them (SCIM filters). */
export interface MembershipTables {
  groups: EntitySql<Group>;
  members: EntitySql<GroupMember>;
  users: EntitySql<User>;
}

/** A query's condition and order, written with the groups table's columns and the placeholders. */
export type GroupSearchPlan = (
  column: (property: keyof Group) => string,
  param: (value: unknown) => string,
) => { where: string; orderBy: string };

const MEMBER_USER_FK = 'FK_group_members_user';

/**
 * Every statement on `groups` and `group_members`. A write of a group is one transaction that
 * first updates the group's row (its version, and the If-Match check), so writes of one group
 * queue on that row's lock: two member changes sent at once both apply, neither undoes the other.
 * Within one process they queue in memory first (KeyedQueue), so a provider's burst on one group
 * holds one database connection waiting on the lock, not the whole pool.
 */
@Injectable()
export class GroupsRepository {
  readonly tables: MembershipTables;
  private readonly writes = new KeyedQueue<number>();

  constructor(
    @InjectRepository(Group) groups: Repository<Group>,
    @InjectRepository(GroupMember) members: Repository<GroupMember>,
    @InjectRepository(User) users: Repository<User>,
    private readonly scope: TransactionScope,
  ) {
    this.tables = {
      groups: new EntitySql(groups),
      members: new EntitySql(members),
      users: new EntitySql(users),
    };
  }

  async findById(id: number): Promise<Group | undefined> {
    const { groups } = this.tables;
    const [row] = await this.scope
      .queryable()
      .query(
        reads(`SELECT ${groups.selectList} FROM ${groups.table} WHERE ${groups.column('id')} = $1`),
        [id],
      );
    return row && groups.toEntity(row);
  }

  /** The members of each group, by user id. */
  async membersOf(groupIds: number[]): Promise<Map<number, Member[]>> {
    if (groupIds.length === 0) return new Map();
    const { members: m, users: u } = this.tables;
    const rows = await this.scope
      .queryable()
      .query<Member & { groupId: number }>(
        reads(
          `SELECT m.${m.column('groupId')} AS "groupId", m.${m.column('userId')} AS "userId", ` +
            `u.${u.column('name')} AS "name" FROM ${m.table} m ` +
            `JOIN ${u.table} u ON u.${u.column('id')} = m.${m.column('userId')} ` +
            `WHERE m.${m.column('groupId')} = ANY($1) ORDER BY 1, 2`,
        ),
        [groupIds],
      );
    const byGroup = new Map<number, Member[]>(groupIds.map((id) => [id, []]));
    for (const { groupId, userId, name } of rows) byGroup.get(groupId)?.push({ userId, name });
    return byGroup;
  }

  /** A user's groups, in group id order (the function `membershipsSql` calls). */
  async groupsOf(userId: number): Promise<Membership[]> {
    const [row] = await this.scope
      .queryable()
      .query<{ groups: unknown }>(reads(`SELECT ${this.membershipsSql('$1')} AS "groups"`), [
        userId,
      ]);
    return this.membershipsOf(row.groups);
  }

  /**
   * SQL of a user's memberships, to read in the same statement as the user whose id is `userId`
   * (an SQL expression): `{group id, display name}` pairs in group id order (text[][]), read back
   * with `membershipsOf`. A function of the database's (migration 1718000000014), whose plan
   * PL/pgSQL keeps: the same subquery written into the statement was planned on every call, and a
   * provider's look-up by userName spent more time planning than executing.
   */
  membershipsSql(userId: string): string {
    return `"user_groups"(${userId})`;
  }

  /** The memberships `membershipsSql` reads: `[["7", "Admins"], …]`. */
  membershipsOf(pairs: unknown): Membership[] {
    return (pairs as [string, string][]).map(([groupId, displayName]) => ({
      groupId: Number(groupId),
      displayName,
    }));
  }

  /** Creates a group with its members, in one transaction. */
  create(fields: GroupFields, memberIds: number[]): Promise<Group> {
    const { groups } = this.tables;
    return this.scope.run(async (tx) => {
      const [row] = await tx.query(groups.insert(['displayName', 'externalId']), [
        fields.displayName,
        fields.externalId,
      ]);
      const group = groups.toEntity(row);
      await this.changeMembers(group.id, [{ kind: 'add', userIds: memberIds }]);
      return group;
    });
  }

  /**
   * Writes `fields` and applies `changes` to the members, in one transaction that first locks the
   * group's row and moves its version on. With `versions`, only if the group is at one of them
   * (else PreconditionFailedError); NotFoundError if there is no such group. `prepare` runs
   * after the lock, before the changes, with the group as locked (to read its members, say).
   */
  write(
    id: number,
    fields: Partial<GroupFields>,
    versions: number[] | undefined,
    changes: (locked: Group) => Promise<MemberChange[]> | MemberChange[],
  ): Promise<Group> {
    const { groups } = this.tables;
    return this.writes.run(id, () =>
      this.scope.run(async (tx) => {
        const params: unknown[] = [id];
        // The version moves on explicitly: an update within the same millisecond as the last
        // would leave the row as it was, and the version trigger would keep the version.
        const version = groups.column('version');
        const sets = [`${groups.column('updatedAt')} = now()`, `${version} = ${version} + 1`];
        for (const property of ['displayName', 'externalId'] as const) {
          if (fields[property] !== undefined) {
            sets.push(`${groups.column(property)} = $${params.push(fields[property])}`);
          }
        }
        let where = `${groups.column('id')} = $1`;
        if (versions) where += ` AND ${groups.column('version')} = ANY($${params.push(versions)})`;
        const [row] = await tx.query(
          `UPDATE ${groups.table} SET ${sets.join(', ')} WHERE ${where} RETURNING ${groups.selectList}`,
          params,
        );
        if (!row) throw await this.missing(id);
        const group = groups.toEntity(row);
        await this.changeMembers(id, await changes(group));
        return group;
      }),
    );
  }

  /** Deletes the group and its memberships; with `versions`, only at one of them. */
  async delete(id: number, versions?: number[]): Promise<void> {
    const { groups } = this.tables;
    const params: unknown[] = [id];
    let where = `${groups.column('id')} = $1`;
    if (versions) where += ` AND ${groups.column('version')} = ANY($${params.push(versions)})`;
    const rows = await this.scope
      .queryable()
      .query(`DELETE FROM ${groups.table} WHERE ${where} RETURNING 1`, params);
    if (rows.length === 0) throw await this.missing(id);
  }

  /**
   * The groups a plan's condition selects, in its order, `limit` after `offset`, and how many it
   * selects in all (exact). On the primary: a provider reads what it has just written.
   */
  async search(
    plan: GroupSearchPlan,
    offset: number,
    limit: number,
  ): Promise<{ groups: Group[]; total: number }> {
    const { groups } = this.tables;
    const params: unknown[] = [];
    const { where, orderBy } = plan(
      (property) => `${groups.table}.${groups.column(property)}`,
      (value) => `$${params.push(value)}`,
    );
    const db = this.scope.queryable();
    const from = `FROM ${groups.table} WHERE ${where}`;
    const [rows, [{ total }]] = await Promise.all([
      limit === 0
        ? []
        : db.query(
            reads(
              `SELECT ${groups.selectList} ${from} ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}`,
            ),
            params,
          ),
      db.query<{ total: number }>(reads(`SELECT count(*)::int AS "total" ${from}`), params),
    ]);
    return { groups: rows.map((row) => groups.toEntity(row)), total };
  }

  /** The ids among `userIds` that are no user's. */
  async unknownUsers(userIds: number[]): Promise<number[]> {
    const { users } = this.tables;
    const rows = await this.scope
      .queryable()
      .query<{ id: number }>(
        reads(
          `SELECT x.id FROM unnest($1::int[]) AS x(id) WHERE NOT EXISTS ` +
            `(SELECT 1 FROM ${users.table} u WHERE u.${users.column('id')} = x.id)`,
        ),
        [userIds],
      );
    return rows.map(({ id }) => id);
  }

  private async changeMembers(groupId: number, changes: MemberChange[]): Promise<void> {
    const { members: m } = this.tables;
    const db = this.scope.queryable();
    const group = m.column('groupId');
    const user = m.column('userId');
    for (const change of changes) {
      if (change.kind === 'clear') {
        await db.query(`DELETE FROM ${m.table} WHERE ${group} = $1`, [groupId]);
      } else if (change.kind === 'remove' && change.userIds.length > 0) {
        await db.query(`DELETE FROM ${m.table} WHERE ${group} = $1 AND ${user} = ANY($2)`, [
          groupId,
          change.userIds,
        ]);
      } else if (change.kind === 'add' && change.userIds.length > 0) {
        // Looked up first: after the insert's foreign-key error the transaction reads nothing.
        const unknown = await this.unknownUsers(change.userIds);
        if (unknown.length > 0) throw new UnknownMembersError(unknown);
        try {
          await db.query(
            `INSERT INTO ${m.table} (${group}, ${user}) SELECT $1, unnest($2::int[]) ` +
              `ON CONFLICT DO NOTHING`,
            [groupId, change.userIds],
          );
        } catch (error) {
          // A user deleted since the look-up.
          if (isForeignKeyViolation(error, MEMBER_USER_FK)) {
            throw new UnknownMembersError(change.userIds);
          }
          throw error;
        }
      }
    }
  }

  private async missing(id: number): Promise<Error> {
    const { groups } = this.tables;
    const [exists] = await this.scope
      .queryable()
      .query(reads(`SELECT 1 FROM ${groups.table} WHERE ${groups.column('id')} = $1`), [id]);
    return exists
      ? new PreconditionFailedError(`Group ${id} has changed: If-Match matches no current ETag`)
      : new NotFoundError(`Group ${id} not found`);
  }
}

/** Members named by ids that are no user's (never created, or deleted meanwhile: maybe some of them). */
export class UnknownMembersError extends Error {
  override readonly name = 'UnknownMembersError';

  constructor(readonly userIds: number[]) {
    super(`no user has the id ${userIds.join(', ')}`);
  }
}
