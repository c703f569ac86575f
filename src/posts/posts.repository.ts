import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { NotFoundError } from '../common/errors.js';
import { isForeignKeyViolation } from '../database/database-errors.js';
import { EntitySql } from '../database/entity-sql.js';
import { ReadReplicas } from '../database/read-replicas.js';
import { reads, type ReadStatement } from '../database/statement.js';
import { TransactionScope } from '../database/transaction-scope.js';
import { ListCounts, listCountKey } from '../lists/list-counts.js';
import { ListPlan, type ListPage } from '../lists/list-plan.js';
import type { ListPostsQueryDto, PostSortField } from './dto/list-posts-query.dto.js';
import { Post } from './post.entity.js';

const USER_FOREIGN_KEY = 'posts_user_id_fkey';

/** The columns a create writes. */
export type PostFields = Pick<Post, 'userId' | 'title' | 'body'>;

/** Every statement on `posts`, generated once from the entity's metadata (see UsersRepository). */
@Injectable()
export class PostsRepository {
  private readonly sql: EntitySql<Post>;
  private readonly selectOne: ReadStatement;
  private readonly insertRow: string;
  private readonly list: ListPlan<Post, PostSortField>;

  constructor(
    @InjectRepository(Post) posts: Repository<Post>,
    private readonly scope: TransactionScope,
    private readonly replicas: ReadReplicas,
    counts: ListCounts,
  ) {
    this.sql = new EntitySql(posts);
    this.selectOne = reads(
      `SELECT ${this.sql.selectList} FROM ${this.sql.table} ` +
        `WHERE ${this.sql.column('id')} = $1 AND ${this.sql.column('userId')} = $2`,
    );
    this.insertRow = this.sql.insert(['userId', 'title', 'body']);
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

  /** The page and its total, read from a replica when DATABASE_READ_URLS is set. */
  findPageOfUser(userId: number, query: ListPostsQueryDto): Promise<ListPage<Post>> {
    return this.list.fetch(this.replicas.reader(), query, {
      scope: `posts?userId=${userId}`,
      filters: (param) => [`${this.sql.column('userId')} = ${param(userId)}`],
      countKey: listCountKey.postsOfUser(userId),
    });
  }

  async findOne(userId: number, postId: number): Promise<Post | undefined> {
    const [row] = await this.scope.queryable().query(this.selectOne, [postId, userId]);
    return row && this.sql.toEntity(row);
  }

  /**
   * One INSERT … RETURNING; the foreign key is the user's existence check, so no separate lookup
   * can race with a DELETE of the user. Throws NotFoundError when the user does not exist.
   */
  async insert({ userId, title, body }: PostFields): Promise<Post> {
    try {
      const [row] = await this.scope.queryable().query(this.insertRow, [userId, title, body]);
      return this.sql.toEntity(row);
    } catch (error) {
      if (isForeignKeyViolation(error, USER_FOREIGN_KEY)) {
        throw new NotFoundError(`user ${userId} not found`);
      }
      throw error;
    }
  }
}
