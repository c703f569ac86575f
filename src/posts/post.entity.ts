import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import { User } from '../users/user.entity.js';

@Index('posts_user_id_id_idx', ['userId', 'id'])
@Index('posts_user_id_created_at_id_idx', ['userId', 'createdAt', 'id'])
@Entity('posts')
export class Post {
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

  // Milliseconds, as the API shows them and a list cursor carries them.
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;

  /** The ETag's source: the database increments it whenever the row changes (a trigger). */
  @Column({ type: 'integer', default: 1 })
  version: number;
}
