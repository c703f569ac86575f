import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isForeignKeyViolation } from '../common/database-errors.js';
import { NotFoundError } from '../common/errors.js';
import type { ListQuery, ListSpec, Page } from '../common/list-query.js';
import { UsersService } from '../users/users.service.js';
import { CreatePostDto } from './dto/create-post.dto.js';
import { Post } from './post.entity.js';

export const POST_SORT_FIELDS = ['id', 'title', 'createdAt', 'updatedAt'] as const;
export type PostSortField = (typeof POST_SORT_FIELDS)[number];
export const POST_LIST_SPEC: ListSpec<PostSortField> = { sortFields: POST_SORT_FIELDS };
export type PostListQuery = ListQuery<PostSortField>;

const USER_FOREIGN_KEY = 'posts_user_id_fkey';

@Injectable()
export class PostsService {
  constructor(
    @InjectRepository(Post) private readonly posts: Repository<Post>,
    private readonly usersService: UsersService,
  ) {}

  async findAllForUser(userId: number, { page, limit, sort }: PostListQuery): Promise<Page<Post>> {
    await this.usersService.findOne(userId);
    const query = this.posts.createQueryBuilder('post').where('post.userId = :userId', { userId });
    for (const { field, direction } of sort) query.addOrderBy(`post.${field}`, direction);
    if (!sort.some(({ field }) => field === 'id')) query.addOrderBy('post.id', 'ASC');
    const [items, total] = await Promise.all([
      query
        .clone()
        .offset((page - 1) * limit)
        .limit(limit)
        .getMany(),
      query.getCount(),
    ]);
    return { items, total };
  }

  async findOne(userId: number, postId: number): Promise<Post> {
    const post = await this.posts.findOneBy({ id: postId, userId });
    if (!post) {
      await this.usersService.findOne(userId);
      throw new NotFoundError(`post ${postId} of user ${userId} not found`);
    }
    return post;
  }

  async create(userId: number, dto: CreatePostDto): Promise<Post> {
    const post = this.posts.create({ userId, title: dto.title, body: dto.body ?? '' });
    try {
      return await this.posts.save(post);
    } catch (error) {
      // The foreign key is the existence check: no separate lookup can race with a DELETE.
      if (isForeignKeyViolation(error, USER_FOREIGN_KEY)) {
        throw new NotFoundError(`user ${userId} not found`);
      }
      throw error;
    }
  }
}
