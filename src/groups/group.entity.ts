import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { VersionedRow } from '../database/versioned-row.js';

/**
 * A group of users, as identity providers provision them over SCIM (docs/provisioning.md). Its
 * members are rows of GroupMember; a change of them changes the group's version too.
 */
@Index('groups_external_id_idx', ['externalId'])
@Index('groups_display_name_idx', ['displayName'])
@Entity('groups')
export class Group extends VersionedRow {
  @PrimaryGeneratedColumn('identity', {
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'PK_groups',
  })
  id: number;

  @Column({ name: 'display_name', type: 'varchar', length: 256 })
  displayName: string;

  /** The identity provider's id of the group (SCIM externalId). */
  @Column({ name: 'external_id', type: 'varchar', length: 256, nullable: true })
  externalId: string | null;
}
