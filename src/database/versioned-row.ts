import { Column, CreateDateColumn, UpdateDateColumn } from 'typeorm';

/**
 * The columns every resource the API edits shares (users, posts): creation and update times,
 * and the version its ETag derives from. Entities extend it; TypeORM gives each entity's table
 * these columns, so the entity stays the whole description of its table.
 */
export abstract class VersionedRow {
  // Milliseconds, as the API shows them and a list cursor carries them.
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;

  /** The ETag's source: the database increments it whenever the row changes (a trigger). */
  @Column({ type: 'integer', default: 1 })
  version: number;
}
