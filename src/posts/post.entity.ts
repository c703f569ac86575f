import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { VersionedRow } from '../database/versioned-row.js';
import { User } from '../users/user.entity.js';

@Index('posts_user_id_id_idx', ['userId', 'id'])
@Index('posts_user_id_created_at_id_idx', ['userId', 'createdAt', 'id'])
@Entity('posts')
export class Post extends VersionedRow {
  @PrimaryGeneratedColumn('identity', {
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'PK_posts',
  })
  id: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  // The database deletes a user's posts with the user (ON DELETE CASCADE).
  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'posts_user_id_fkey' })
  user?: Relation<User>;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ type: 'varchar', length: 10000, default: '' })
  body: string;
}
