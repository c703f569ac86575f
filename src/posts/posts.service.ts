import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors.js';
import type { ListPage } from '../lists/list-plan.js';
import { UsersService } from '../users/users.service.js';
import type { CreatePostDto } from './dto/create-post.dto.js';
import type { ListPostsQueryDto } from './dto/list-posts-query.dto.js';
import type { Post } from './post.entity.js';
import { PostsRepository } from './posts.repository.js';

@Injectable()
export class PostsService {
  constructor(
    private readonly posts: PostsRepository,
    private readonly usersService: UsersService,
  ) {}

  /**
   * The page of a user's posts; whether the user exists is asked of the primary, like every read
   * by id, beside the page query: its NotFoundError wins if the user is gone.
   */
  async findAllForUser(userId: number, query: ListPostsQueryDto): Promise<ListPage<Post>> {
    const [, page] = await Promise.all([
      this.usersService.assertExists(userId),
      this.posts.findPageOfUser(userId, query),
    ]);
    return page;
  }

  async findOne(userId: number, postId: number): Promise<Post> {
    const post = await this.posts.findOne(userId, postId);
    if (post) return post;
    await this.usersService.assertExists(userId);
    throw new NotFoundError(`post ${postId} of user ${userId} not found`);
  }

  create(userId: number, dto: CreatePostDto): Promise<Post> {
    return this.posts.insert({ userId, title: dto.title, body: dto.body ?? '' });
  }
}
