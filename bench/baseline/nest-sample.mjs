// The peer of the benchmark: the shape of NestJS's own sample `05-sql-typeorm` on the service's
// tables, as a team would write it from the docs. Nest 12 on @nestjs/platform-express and
// TypeORM, a `User` and a `Post` entity on the `users` and `posts` tables, and UsersController
// → UsersService → TypeORM repositories:
//
//   GET /users/:id          ParseIntPipe, then repository.findOneBy({ id }); 404 when missing
//   GET /users?role=&limit=  findAndCount({ where: { role }, order: newest first, take: limit ?? 20 }),
//                           the count as X-Total-Count
//   GET /users/:id/posts    findOneBy the author (404 when missing), then its posts:
//                           findAndCount({ where: { userId }, order: id, take: 20 }), X-Total-Count
//
// The lists give the service's answers (the same items, the same total, the same 404 for an
// unknown user) written the way the docs teach: the total is TypeORM's count of the matching rows,
// run on every request. The entities are returned as they are (TypeORM's objects, through Nest's
// default JSON reply and Express's default ETag). Nothing else: no validation beyond ParseIntPipe,
// no response DTOs, no logging per request, no helmet, no request ids, no Link headers, no gRPC,
// no writes. /health and /health/ready are there for the benchmark to load and to wait on.
//
// Plain ESM so that `npm run bench` runs it with no build step: the decorators are applied with
// Reflect.decorate and the `design:paramtypes` metadata is written out, as `nest build` (tsc)
// emits them for the sample's TypeScript.
//
//   DATABASE_URL=postgres://… PORT=3300 node bench/baseline/nest-sample.mjs
import 'reflect-metadata';
import {
  Controller,
  Get,
  Injectable,
  Module,
  NotFoundException,
  Param,
  ParseIntPipe,
  Query,
  Res,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import {
  Column,
  CreateDateColumn,
  DataSource,
  Entity,
  PrimaryGeneratedColumn,
  Repository,
  UpdateDateColumn,
} from 'typeorm';

// What tsc emits for decorators: __decorate, __param and __metadata('design:paramtypes', …).
const decorateClass = (target, ...decorators) => Reflect.decorate(decorators, target);
function decorateMember(prototype, key, ...decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
  if (descriptor === undefined) {
    Reflect.decorate(decorators, prototype, key);
    return;
  }
  Object.defineProperty(prototype, key, Reflect.decorate(decorators, prototype, key, descriptor));
}
const param = (index, decorator) => (target, key) => decorator(target, key, index);
const paramTypes = (...types) => Reflect.metadata('design:paramtypes', types);

// The entities: the columns of the migrations' tables (the column types written out, where tsc
// would infer them from the property types). Both tables have the same three last columns.
class VersionedRow {}
decorateMember(
  VersionedRow.prototype,
  'createdAt',
  CreateDateColumn({ name: 'created_at', type: 'timestamptz' }),
);
decorateMember(
  VersionedRow.prototype,
  'updatedAt',
  UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }),
);
decorateMember(VersionedRow.prototype, 'version', Column({ type: 'integer' }));

class User extends VersionedRow {}
decorateMember(User.prototype, 'id', PrimaryGeneratedColumn('identity'));
decorateMember(User.prototype, 'name', Column({ type: 'varchar' }));
decorateMember(User.prototype, 'email', Column({ type: 'varchar', nullable: true }));
decorateMember(User.prototype, 'role', Column({ type: 'varchar' }));
decorateClass(User, Entity('users'));

class Post extends VersionedRow {}
decorateMember(Post.prototype, 'id', PrimaryGeneratedColumn('identity'));
decorateMember(Post.prototype, 'userId', Column({ name: 'user_id', type: 'integer' }));
decorateMember(Post.prototype, 'title', Column({ type: 'varchar' }));
decorateMember(Post.prototype, 'body', Column({ type: 'varchar' }));
decorateClass(Post, Entity('posts'));

class UsersService {
  constructor(usersRepository, postsRepository) {
    this.usersRepository = usersRepository;
    this.postsRepository = postsRepository;
  }

  /** The page and the number of matching users: [users, total]. */
  findAll(role, limit) {
    return this.usersRepository.findAndCount({
      where: role === undefined ? {} : { role },
      order: { createdAt: 'DESC', id: 'ASC' },
      take: limit ?? 20,
    });
  }

  findOne(id) {
    return this.usersRepository.findOneBy({ id });
  }

  /** The author's first posts and how many it has: [posts, total]; 404 for an unknown user. */
  async findPosts(userId) {
    const user = await this.usersRepository.findOneBy({ id: userId });
    if (!user) throw new NotFoundException(`user ${userId} not found`);
    return this.postsRepository.findAndCount({
      where: { userId },
      order: { id: 'ASC' },
      take: 20,
    });
  }
}
decorateClass(
  UsersService,
  Injectable(),
  param(0, InjectRepository(User)),
  param(1, InjectRepository(Post)),
  paramTypes(Repository, Repository),
);

class UsersController {
  constructor(usersService) {
    this.usersService = usersService;
  }

  async findAll(role, limit, response) {
    const [users, total] = await this.usersService.findAll(role, limit);
    response.set('X-Total-Count', String(total));
    return users;
  }

  async findOne(id) {
    const user = await this.usersService.findOne(id);
    if (!user) throw new NotFoundException(`user ${id} not found`);
    return user;
  }

  async findPosts(id, response) {
    const [posts, total] = await this.usersService.findPosts(id);
    response.set('X-Total-Count', String(total));
    return posts;
  }
}
decorateMember(
  UsersController.prototype,
  'findAll',
  Get(),
  param(0, Query('role')),
  param(1, Query('limit', new ParseIntPipe({ optional: true }))),
  param(2, Res({ passthrough: true })),
  paramTypes(String, Number, Object),
);
decorateMember(
  UsersController.prototype,
  'findOne',
  Get(':id'),
  param(0, Param('id', ParseIntPipe)),
  paramTypes(Number),
);
decorateMember(
  UsersController.prototype,
  'findPosts',
  Get(':id/posts'),
  param(0, Param('id', ParseIntPipe)),
  param(1, Res({ passthrough: true })),
  paramTypes(Number, Object),
);
decorateClass(UsersController, Controller('users'), paramTypes(UsersService));

class HealthController {
  constructor(dataSource) {
    this.dataSource = dataSource;
  }

  live() {
    return { ok: true };
  }

  async ready() {
    await this.dataSource.query('SELECT 1');
    return { ok: true };
  }
}
decorateMember(HealthController.prototype, 'live', Get());
decorateMember(HealthController.prototype, 'ready', Get('ready'));
decorateClass(HealthController, Controller('health'), paramTypes(DataSource));

class UsersModule {}
decorateClass(
  UsersModule,
  Module({
    imports: [TypeOrmModule.forFeature([User, Post])],
    controllers: [UsersController],
    providers: [UsersService],
  }),
);

class AppModule {}
decorateClass(
  AppModule,
  Module({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: process.env.DATABASE_URL,
        autoLoadEntities: true,
        synchronize: false,
        // The service's default pool size (DB_POOL_SIZE), as every target of the benchmark has.
        poolSize: Number(process.env.DB_POOL_SIZE ?? 10),
      }),
      UsersModule,
    ],
    controllers: [HealthController],
  }),
);

const app = await NestFactory.create(AppModule);
await app.listen(Number(process.env.PORT ?? 3300), process.env.HOST ?? '127.0.0.1');
// An orderly exit on SIGTERM, so that `--cpu-prof` gets its profile written.
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    app.close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
