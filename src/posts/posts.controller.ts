import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  ApiErrors,
  ApiIdParam,
  LOCATION_HEADER,
  PAGE_HEADERS,
} from '../common/openapi.decorators.js';
import { setPaginationHeaders } from '../common/pagination.js';
import { ParseIdPipe } from '../common/parse-id.pipe.js';
import { CreatePostDto } from './dto/create-post.dto.js';
import { ListPostsQueryDto } from './dto/list-posts-query.dto.js';
import { PostResponseDto } from './dto/post-response.dto.js';
import { PostsService } from './posts.service.js';

@ApiTags('posts')
@Controller('users/:id/posts')
export class PostsController {
  constructor(private readonly postsService: PostsService) {}

  @Get()
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
  @ApiIdParam()
  @ApiIdParam('postId', 'post id')
  @ApiOkResponse({ type: PostResponseDto })
  @ApiErrors(400, 404, 503)
  async findOne(
    @Param('id', ParseIdPipe) userId: number,
    @Param('postId', ParseIdPipe) postId: number,
  ): Promise<PostResponseDto> {
    return PostResponseDto.from(await this.postsService.findOne(userId, postId));
  }

  @Post()
  @ApiIdParam()
  @ApiCreatedResponse({ type: PostResponseDto, headers: LOCATION_HEADER })
  @ApiErrors(400, 404, 413, 415, 503)
  async create(
    @Param('id', ParseIdPipe) userId: number,
    @Body() dto: CreatePostDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResponseDto> {
    const post = await this.postsService.create(userId, dto);
    response.location(`/users/${userId}/posts/${post.id}`);
    return PostResponseDto.from(post);
  }
}
