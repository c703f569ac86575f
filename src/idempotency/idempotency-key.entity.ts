import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** The stored outcome of one keyed create (POST with an Idempotency-Key header). */
@Index('idempotency_keys_created_at_idx', ['createdAt'])
@Entity('idempotency_keys')
export class IdempotencyKey {
  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'PK_idempotency_keys' })
  key: string;

  /** SHA-256 (hex) of the method, path and canonical JSON body of the request. */
  @Column({ type: 'char', length: 64 })
  fingerprint: string;

  /**
   * Set with the key: this service inserts a key with its outcome. Nullable for processes of
   * earlier versions, which insert the key before their create and its outcome just before their
   * commit, during a rolling upgrade: never null once committed.
   */
  @Column({ type: 'smallint', nullable: true })
  status: number | null;

  /** Location and ETag of a 201. */
  @Column({ type: 'jsonb', default: {} })
  headers: Record<string, string>;

  @Column({ type: 'jsonb', nullable: true })
  body: object | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
