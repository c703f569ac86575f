import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { EntitySql } from '../database/entity-sql.js';
import { ListCount } from './list-count.entity.js';
import type { Queryable } from '../database/queryable.js';
import { reads, type ReadStatement } from '../database/statement.js';

/** The keys the triggers maintain (see ListCount). */
export const listCountKey = {
  users: (role?: string, active?: boolean) => {
    const byActive = active === undefined ? '' : `active:${active}`;
    if (role === undefined) return byActive ? `users.${byActive}` : 'users';
    return byActive ? `users.role:${role}.${byActive}` : `users.role:${role}`;
  },
  postsOfUser: (userId: number) => `posts.user:${userId}`,
};

/**
 * Reads the exact row count of a list in O(1): the sum of its slots in list_counts. The SQL is
 * generated once from the ListCount entity's metadata.
 */
@Injectable()
export class ListCounts {
  private readonly sql: ReadStatement;

  constructor(@InjectRepository(ListCount) counts: Repository<ListCount>) {
    const table = new EntitySql(counts);
    this.sql = reads(
      `SELECT coalesce(sum(${table.column('n')}), 0)::int AS "total" ` +
        `FROM ${table.table} WHERE ${table.column('list')} = $1`,
    );
  }

  async count(db: Queryable, key: string): Promise<number> {
    const [row] = await db.query<{ total: number }>(this.sql, [key]);
    return row.total;
  }
}
