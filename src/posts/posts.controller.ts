import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ConditionalGet, Created } from '../http/etag.decorators.js';
import { ApiErrors, ApiIdParam } from '../http/openapi.decorators.js';
import { ParseIdPipe } from '../http/parse-id.pipe.js';
import { Idempotent } from '../idempotency/idempotency.interceptor.js';
import { Listed } from '../lists/list-headers.js';
import { type ListPage, mapPage } from '../lists/list-plan.js';
import { RequiredScope } from '../auth/auth.decorators.js';
import { CreatePostDto } from './dto/create-post.dto.js';
import { ListPostsQueryDto } from './dto/list-posts-query.dto.js';
import { PostResponseDto } from './dto/post-response.dto.js';
import { PostsService } from './posts.service.js';

@ApiTags('posts')
@Controller('users/:id/posts')
export class PostsController {
  constructor(private readonly postsService: PostsService) {}

  @Get()
  @RequiredScope('users:read')
  @ApiOperation({ summary: 'List the posts of a user' })
  @ApiIdParam()
  @Listed(PostResponseDto)
  @ApiErrors(400, 404, 503)
  async findAll(
    @Param('id', ParseIdPipe) userId: number,
    @Query() query: ListPostsQueryDto,
  ): Promise<ListPage<PostResponseDto>> {
    return mapPage(await this.postsService.findAllForUser(userId, query), PostResponseDto.from);
  }

  @Get(':postId')
  @RequiredScope('users:read')
  @ApiOperation({ summary: 'Get one post of a user' })
  @ApiIdParam()
  @ApiIdParam('postId', 'post id')
  @ConditionalGet(PostResponseDto)
  @ApiErrors(400, 404, 503)
  async findOne(
    @Param('id', ParseIdPipe) userId: number,
    @Param('postId', ParseIdPipe) postId: number,
  ): Promise<PostResponseDto> {
    return PostResponseDto.from(await this.postsService.findOne(userId, postId));
  }

  @Post()
  @RequiredScope('users:write')
  @ApiOperation({ summary: 'Create a post for a user' })
  @ApiIdParam()
  @Idempotent()
  @Created(PostResponseDto, (post) => `/users/${post.userId}/posts/${post.id}`)
  @ApiErrors(400, 404, 413, 415, 422, 503)
  async create(
    @Param('id', ParseIdPipe) userId: number,
    @Body() dto: CreatePostDto,
  ): Promise<PostResponseDto> {
    return PostResponseDto.from(await this.postsService.create(userId, dto));
  }
}
