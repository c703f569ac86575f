import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { VersionedRow } from '../database/versioned-row.js';

export const DEFAULT_ROLE = 'member';

// Created by the migrations: UNIQUE (lower(email)), UNIQUE (lower(user_name)), and the keyset indexes with a descending
// created_at. TypeORM can express neither an expression nor a descending column, so
// synchronize: false keeps `migration:generate` from trying to drop them.
@Index('users_email_lower_key', { synchronize: false })
@Index('users_user_name_lower_key', { synchronize: false })
@Index('users_external_id_idx', ['externalId'])
@Index('users_created_at_id_idx', { synchronize: false })
@Index('users_role_created_at_id_idx', { synchronize: false })
@Index('users_role_id_idx', ['role', 'id'])
@Index('users_name_id_idx', ['name', 'id'])
@Check('users_user_name_not_empty', `"user_name" <> ''`)
@Check('users_scim_attributes_object', `jsonb_typeof("scim_attributes") = 'object'`)
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

  /** SCIM's userName: unique ignoring case; the database gives a new user its email, else `user-<id>`. */
  // The explicit NULL default makes TypeORM read the value back after an insert (RETURNING): a
  // trigger fills it in when the insert leaves it out.
  @Column({ name: 'user_name', type: 'varchar', length: 256, default: () => 'NULL' })
  userName: string;

  @Column({ type: 'boolean', default: true })
  active: boolean;

  /** The identity provider's id of the user (SCIM externalId). */
  @Column({ name: 'external_id', type: 'varchar', length: 256, nullable: true })
  externalId: string | null;

  /** The other SCIM attributes the service stores, validated against its SCIM schema (src/scim). */
  @Column({ name: 'scim_attributes', type: 'jsonb', default: {} })
  scimAttributes: Record<string, unknown>;
}
