import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { VersionedRow } from '../database/versioned-row.js';

export const DEFAULT_ROLE = 'member';

// Created by the migrations: UNIQUE (lower(email)), and the keyset indexes with a descending
// created_at. TypeORM can express neither an expression nor a descending column, so
// synchronize: false keeps `migration:generate` from trying to drop them.
@Index('users_email_lower_key', { synchronize: false })
@Index('users_created_at_id_idx', { synchronize: false })
@Index('users_role_created_at_id_idx', { synchronize: false })
@Index('users_role_id_idx', ['role', 'id'])
@Index('users_name_id_idx', ['name', 'id'])
@Entity('users')
export class User extends VersionedRow {
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
}
