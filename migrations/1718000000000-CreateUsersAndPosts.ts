import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateUsersAndPosts1718000000000 implements MigrationInterface {
  name = 'CreateUsersAndPosts1718000000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "users" (
        "id" integer GENERATED ALWAYS AS IDENTITY NOT NULL,
        "name" character varying(100) NOT NULL,
        "email" character varying(254),
        "role" character varying(32) NOT NULL DEFAULT 'member',
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_users" PRIMARY KEY ("id")
      )`);
    // Email is unique ignoring case; the service maps a violation of this index to 409.
    await queryRunner.query(
      `CREATE UNIQUE INDEX "users_email_lower_key" ON "users" (lower("email"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "users_role_created_at_idx" ON "users" ("role", "created_at")`,
    );
    await queryRunner.query(`CREATE INDEX "users_created_at_idx" ON "users" ("created_at")`);
    await queryRunner.query(`CREATE INDEX "users_name_idx" ON "users" ("name")`);

    await queryRunner.query(`
      CREATE TABLE "posts" (
        "id" integer GENERATED ALWAYS AS IDENTITY NOT NULL,
        "user_id" integer NOT NULL,
        "title" character varying(200) NOT NULL,
        "body" character varying(10000) NOT NULL DEFAULT '',
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_posts" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "posts_user_id_id_idx" ON "posts" ("user_id", "id")`);
    await queryRunner.query(
      `CREATE INDEX "posts_user_id_created_at_idx" ON "posts" ("user_id", "created_at")`,
    );
    await queryRunner.query(`
      ALTER TABLE "posts" ADD CONSTRAINT "posts_user_id_fkey"
        FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "posts"`);
    await queryRunner.query(`DROP TABLE "users"`);
  }
}
