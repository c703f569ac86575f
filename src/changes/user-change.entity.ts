import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

export const USER_CHANGE_TYPES = ['created', 'updated', 'deleted'] as const;
export type UserChangeType = (typeof USER_CHANGE_TYPES)[number];

/**
 * One change of one user: the change feed's event (docs/events.md). Rows are written only by the
 * triggers of migration 1718000000005 (UserChanges), in the transaction of the change, whoever
 * makes it; the service reads them and purges them after the retention.
 *
 * Feed order is (position, id), the primary key. PostgreSQL's xid8 values (`position`, `xid`) are
 * stored as bigint: TypeORM cannot describe an xid8 column, and an xid8 fits a signed bigint for
 * as long as PostgreSQL's epoch counter stays below 2^31. bigint comes back as a string.
 */
@Index('user_changes_user_id_version_key', ['userId', 'version'], { unique: true })
@Entity('user_changes')
export class UserChange {
  /**
   * The ordering key: the writer's transaction id, or the position of the user's previous event
   * when that is greater (a writer that waited for another writer of the same user).
   */
  @PrimaryColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_user_changes' })
  position: string;

  /** Breaks ties of position; taken from the identity when the event is written. */
  @PrimaryGeneratedColumn('identity', {
    type: 'bigint',
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'PK_user_changes',
  })
  id: string;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  /** The user's version after the change; a deletion's is the last version plus one. */
  @Column({ type: 'integer' })
  version: number;

  @Column({ type: 'enum', enum: USER_CHANGE_TYPES, enumName: 'user_change_type' })
  type: UserChangeType;

  /** Names of the properties whose values changed (never the values). */
  @Column({ type: 'text', array: true })
  changed: string[];

  /** The writer's transaction time, as the user's updatedAt. */
  @Column({ type: 'timestamptz', precision: 3 })
  at: Date;

  /** The writer's transaction id. */
  @Column({ type: 'bigint' })
  xid: string;
}
