import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * How far the retention purge has gone: the (position, id) of the last event it deleted. At most
 * one row; none until the first purge. A token below it is expired (410): events after it are
 * gone. Written in the purge's own transaction, so a reader sees the events and the watermark of
 * the same moment.
 */
@Check('user_changes_watermark_single_row', '"single_row"')
@Entity('user_changes_watermark')
export class UserChangesWatermark {
  @PrimaryColumn({
    name: 'single_row',
    type: 'boolean',
    default: true,
    primaryKeyConstraintName: 'PK_user_changes_watermark',
  })
  singleRow: boolean;

  @Column({ type: 'bigint' })
  position: string;

  @Column({ type: 'bigint' })
  id: string;
}
