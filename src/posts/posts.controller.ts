import {
  Body,
  Controller,
  Get,
  Headers,
  HttpStatus,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { RequiredScope } from '../auth/auth.decorators.js';
import { conditionalGet, etagOf } from '../common/etag.js';
import {
  ApiConditionalGet,
  ApiErrors,
  ApiIdempotencyKey,
  ApiIdParam,
  CREATED_HEADERS,
  PAGE_HEADERS,
} from '../common/openapi.decorators.js';
import { setPaginationHeaders } from '../common/pagination.js';
import { ParseIdPipe } from '../common/parse-id.pipe.js';
import { CreatePostDto } from './dto/create-post.dto.js';
import { IdempotencyKeyHeader } from '../idempotency/idempotency-key.decorator.js';
import { IdempotencyService } from '../idempotency/idempotency.service.js';
import { ListPostsQueryDto } from './dto/list-posts-query.dto.js';
import { PostResponseDto } from './dto/post-response.dto.js';
import { PostsService } from './posts.service.js';

@ApiTags('posts')
@Controller('users/:id/posts')
export class PostsController {
  constructor(
    private readonly postsService: PostsService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  @RequiredScope('users:read')
  @ApiOperation({ summary: 'List the posts of a user' })
  @ApiIdParam()
  @ApiOkResponse({ type: [PostResponseDto], headers: PAGE_HEADERS })
  @ApiErrors(400, 404, 503)
  async findAll(
    @Param('id', ParseIdPipe) userId: number,
    @Query() query: ListPostsQueryDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResponseDto[]> {
    const page = await this.postsService.findAllForUser(userId, query);
    setPaginationHeaders(request, response, query, page);
    return page.items.map(PostResponseDto.from);
  }

  @Get(':postId')
  @RequiredScope('users:read')
  @ApiOperation({ summary: 'Get one post of a user' })
  @ApiIdParam()
  @ApiIdParam('postId', 'post id')
  @ApiConditionalGet(PostResponseDto)
  @ApiErrors(400, 404, 503)
  async findOne(
    @Param('id', ParseIdPipe) userId: number,
    @Param('postId', ParseIdPipe) postId: number,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResponseDto | undefined> {
    const post = await this.postsService.findOne(userId, postId);
    return conditionalGet(response, etagOf(post), ifNoneMatch, () => PostResponseDto.from(post));
  }

  @Post()
  @RequiredScope('users:write')
  @ApiOperation({ summary: 'Create a post for a user' })
  @ApiIdParam()
  @ApiIdempotencyKey()
  @ApiCreatedResponse({ type: PostResponseDto, headers: CREATED_HEADERS })
  @ApiErrors(400, 404, 413, 415, 422, 503)
  async create(
    @Param('id', ParseIdPipe) userId: number,
    @Body() dto: CreatePostDto,
    @IdempotencyKeyHeader() key: string | undefined,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<object> {
    return this.idempotency.create(key, request, response, async (manager) => {
      const post = await this.postsService.create(userId, dto, manager);
      return {
        status: HttpStatus.CREATED,
        headers: { Location: `/users/${userId}/posts/${post.id}`, ETag: etagOf(post) },
        body: PostResponseDto.from(post),
      };
    });
  }
}
