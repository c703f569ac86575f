import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isForeignKeyViolation } from '../common/database-errors.js';
import { NotFoundError } from '../common/errors.js';
import type { ListQuery, ListSpec, Page } from '../common/list-query.js';
import { orderBy, totalFromPage } from '../common/sql.js';
import { UsersService } from '../users/users.service.js';
import { CreatePostDto } from './dto/create-post.dto.js';
import { Post } from './post.entity.js';

export const POST_SORT_FIELDS = ['id', 'title', 'createdAt', 'updatedAt'] as const;
export type PostSortField = (typeof POST_SORT_FIELDS)[number];
export const POST_LIST_SPEC: ListSpec<PostSortField> = { sortFields: POST_SORT_FIELDS };
export type PostListQuery = ListQuery<PostSortField>;

const USER_FOREIGN_KEY = 'posts_user_id_fkey';

const COLUMNS: Record<PostSortField, string> = {
  id: 'id',
  title: 'title',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
};
const POST_FIELDS = `id, user_id AS "userId", title, body, created_at AS "createdAt", updated_at AS "updatedAt"`;
const SELECT_POST = `SELECT ${POST_FIELDS} FROM posts`;

@Injectable()
export class PostsService {
  constructor(
    @InjectRepository(Post) private readonly posts: Repository<Post>,
    private readonly usersService: UsersService,
  ) {}

  async findAllForUser(userId: number, { page, limit, sort }: PostListQuery): Promise<Page<Post>> {
    // The existence check runs beside the page query; its NotFoundError wins if the user is gone.
    const [, items] = await Promise.all([
      this.usersService.assertExists(userId),
      this.posts.query(
        `${SELECT_POST} WHERE user_id = $1 ${orderBy(sort, COLUMNS)} LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
        [userId],
      ) as Promise<Post[]>,
    ]);
    const total =
      totalFromPage(page, limit, items.length) ??
      (
        await this.posts.query('SELECT count(*)::int AS total FROM posts WHERE user_id = $1', [
          userId,
        ])
      )[0].total;
    return { items, total };
  }

  async findOne(userId: number, postId: number): Promise<Post> {
    const [post]: Post[] = await this.posts.query(`${SELECT_POST} WHERE id = $1 AND user_id = $2`, [
      postId,
      userId,
    ]);
    if (!post) {
      await this.usersService.assertExists(userId);
      throw new NotFoundError(`post ${postId} of user ${userId} not found`);
    }
    return post;
  }

  async create(userId: number, dto: CreatePostDto): Promise<Post> {
    try {
      // One INSERT … RETURNING; the foreign key is the existence check.
      const [post]: Post[] = await this.posts.query(
        `INSERT INTO posts (user_id, title, body) VALUES ($1, $2, $3) RETURNING ${POST_FIELDS}`,
        [userId, dto.title, dto.body ?? ''],
      );
      return post;
    } catch (error) {
      // The foreign key is the existence check: no separate lookup can race with a DELETE.
      if (isForeignKeyViolation(error, USER_FOREIGN_KEY)) {
        throw new NotFoundError(`user ${userId} not found`);
      }
      throw error;
    }
  }
}
