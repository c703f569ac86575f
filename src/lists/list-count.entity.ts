import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One slot of the row count of a list the API offers (`users`, `users.role:<role>`,
 * `users.active:<true|false>`, `users.role:<role>.active:<true|false>`, `posts.user:<id>`). The
 * database keeps these rows: triggers from migrations 1718000000002 (ListCountsAndKeysetIndexes)
 * and 1718000000012 (UsersActiveCounts) update them in every statement that writes users or posts, so rows
 * written by anything are counted. The service only reads them; a list's count is the sum of its
 * slots (concurrent writers update different slots).
 */
@Entity('list_counts')
export class ListCount {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'list_counts_pkey' })
  list: string;

  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'list_counts_pkey' })
  slot: number;

  /** bigint: node-postgres returns it as a string. */
  @Column({ type: 'bigint' })
  n: string;
}
