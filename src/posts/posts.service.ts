import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { isForeignKeyViolation } from '../database/database-errors.js';
import { NotFoundError } from '../common/errors.js';
import { ListPlan, type ListPage } from '../lists/pagination.js';
import { EntitySql } from '../database/entity-sql.js';
import { PrimaryPool } from '../database/queryable.js';
import { ReadReplicas } from '../database/read-replicas.js';
import { ListCounts, listCountKey } from '../lists/list-counts.js';
import { UsersService } from '../users/users.service.js';
import { CreatePostDto } from './dto/create-post.dto.js';
import { ListPostsQueryDto, type PostSortField } from './dto/list-posts-query.dto.js';
import { Post } from './post.entity.js';

const USER_FOREIGN_KEY = 'posts_user_id_fkey';

@Injectable()
export class PostsService {
  // Reads run SQL generated once from the entity's metadata (see UsersService).
  private readonly sql: EntitySql<Post>;
  private readonly selectOne: string;
  private readonly insert: string;
  private readonly list: ListPlan<Post, PostSortField>;

  constructor(
    @InjectRepository(Post) private readonly posts: Repository<Post>,
    private readonly usersService: UsersService,
    private readonly primary: PrimaryPool,
    private readonly replicas: ReadReplicas,
    counts: ListCounts,
  ) {
    this.sql = new EntitySql(posts);
    this.selectOne =
      `SELECT ${this.sql.selectList} FROM ${this.sql.table} ` +
      `WHERE ${this.sql.column('id')} = $1 AND ${this.sql.column('userId')} = $2`;
    this.insert = this.sql.insert(['userId', 'title', 'body']);
    this.list = new ListPlan(
      this.sql,
      {
        id: 'id',
        title: 'title',
        createdAt: 'createdAt',
        updatedAt: 'updatedAt',
      },
      counts,
    );
  }

  /**
   * The page and its total read from a replica when DATABASE_READ_URLS is set; whether the user
   * exists is asked of the primary, like every read by id.
   */
  async findAllForUser(userId: number, query: ListPostsQueryDto): Promise<ListPage<Post>> {
    // The existence check runs beside the page query; its NotFoundError wins if the user is gone.
    const [, page] = await Promise.all([
      this.usersService.assertExists(userId),
      this.list.fetch(this.replicas.reader(), query, {
        scope: `posts?userId=${userId}`,
        filters: (param) => [`${this.sql.column('userId')} = ${param(userId)}`],
        countKey: listCountKey.postsOfUser(userId),
      }),
    ]);
    return page;
  }

  async findOne(userId: number, postId: number): Promise<Post> {
    const [row] = await this.primary.query<Post>(this.selectOne, [postId, userId]);
    if (!row) {
      await this.usersService.assertExists(userId);
      throw new NotFoundError(`post ${postId} of user ${userId} not found`);
    }
    return this.sql.toEntity(row);
  }

  /** @param manager the transaction to create it in (an idempotent create), else none */
  async create(userId: number, dto: CreatePostDto, manager?: EntityManager): Promise<Post> {
    try {
      // One INSERT … RETURNING; the foreign key is the existence check, so no separate lookup
      // can race with a DELETE of the user.
      const values = [userId, dto.title, dto.body ?? ''];
      const [row] = await this.primary.within(manager).query<Post>(this.insert, values);
      return this.sql.toEntity(row);
    } catch (error) {
      if (isForeignKeyViolation(error, USER_FOREIGN_KEY)) {
        throw new NotFoundError(`user ${userId} not found`);
      }
      throw error;
    }
  }
}
