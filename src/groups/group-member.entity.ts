import { Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from '../users/user.entity.js';
import { Group } from './group.entity.js';

/**
 * One user's membership of one group. Deleting either deletes the membership (ON DELETE
 * CASCADE): a deleted user leaves every group, a deleted group keeps no members.
 */
@Index('group_members_user_id_idx', ['userId'])
@Entity('group_members')
export class GroupMember {
  @PrimaryColumn({
    name: 'group_id',
    type: 'integer',
    primaryKeyConstraintName: 'PK_group_members',
  })
  groupId: number;

  @PrimaryColumn({ name: 'user_id', type: 'integer', primaryKeyConstraintName: 'PK_group_members' })
  userId: number;

  @ManyToOne(() => Group, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'group_id', foreignKeyConstraintName: 'FK_group_members_group' })
  group?: Group;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_group_members_user' })
  user?: User;
}
