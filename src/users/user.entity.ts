import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

export const DEFAULT_ROLE = 'member';

// Created by the migration as UNIQUE (lower(email)); TypeORM cannot express an expression index,
// so synchronize: false keeps `migration:generate` from trying to drop it.
@Index('users_email_lower_key', { synchronize: false })
@Index('users_role_idx', ['role'])
@Index('users_role_created_at_idx', ['role', 'createdAt'])
@Index('users_created_at_idx', ['createdAt'])
@Index('users_name_idx', ['name'])
@Entity('users')
export class User {
  @PrimaryGeneratedColumn('identity', {
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'PK_users',
  })
  id: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 254, nullable: true })
  email: string | null;

  @Column({ type: 'varchar', length: 32, default: DEFAULT_ROLE })
  role: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
