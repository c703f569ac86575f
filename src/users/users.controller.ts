import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { RequiredScope } from '../auth/auth.decorators.js';
import { conditionalGet, etagOf, parseIfMatch } from '../common/etag.js';
import {
  ApiConditionalGet,
  ApiErrors,
  ApiIdempotencyKey,
  ApiIdParam,
  ApiIfMatch,
  CREATED_HEADERS,
  ETAG_HEADER,
  PAGE_HEADERS,
} from '../common/openapi.decorators.js';
import { setPaginationHeaders } from '../common/pagination.js';
import { ParseIdPipe } from '../common/parse-id.pipe.js';
import { IdempotencyKeyHeader } from '../idempotency/idempotency-key.decorator.js';
import { IdempotencyService } from '../idempotency/idempotency.service.js';
import { CreateUserDto } from './dto/create-user.dto.js';
import { ListUsersQueryDto } from './dto/list-users-query.dto.js';
import { UpdateUserDto } from './dto/update-user.dto.js';
import { UserResponseDto } from './dto/user-response.dto.js';
import type { User } from './user.entity.js';
import { UsersService } from './users.service.js';

@ApiTags('users')
@Controller('users')
export class UsersController {
  constructor(
    private readonly usersService: UsersService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  @RequiredScope('users:read')
  @ApiOperation({ summary: 'List users (page numbers or a cursor walk)' })
  @ApiOkResponse({ type: [UserResponseDto], headers: PAGE_HEADERS })
  @ApiErrors(400, 503)
  async findAll(
    @Query() query: ListUsersQueryDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<UserResponseDto[]> {
    const page = await this.usersService.findAll(query);
    setPaginationHeaders(request, response, query, page);
    return page.items.map(UserResponseDto.from);
  }

  @Get(':id')
  @RequiredScope('users:read')
  @ApiOperation({ summary: 'Get a user' })
  @ApiIdParam()
  @ApiConditionalGet(UserResponseDto)
  @ApiErrors(400, 404, 503)
  async findOne(
    @Param('id', ParseIdPipe) id: number,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<UserResponseDto | undefined> {
    const user = await this.usersService.findOne(id);
    return conditionalGet(response, etagOf(user), ifNoneMatch, () => UserResponseDto.from(user));
  }

  @Post()
  @RequiredScope('users:write')
  @ApiOperation({ summary: 'Create a user' })
  @ApiIdempotencyKey()
  @ApiCreatedResponse({ type: UserResponseDto, headers: CREATED_HEADERS })
  @ApiErrors(400, 409, 413, 415, 422, 503)
  async create(
    @Body() dto: CreateUserDto,
    @IdempotencyKeyHeader() key: string | undefined,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<object> {
    return this.idempotency.create(key, request, response, async (manager) => {
      const user = await this.usersService.create(dto, manager);
      return {
        status: HttpStatus.CREATED,
        headers: { Location: `/users/${user.id}`, ETag: etagOf(user) },
        body: UserResponseDto.from(user),
      };
    });
  }

  @Put(':id')
  @RequiredScope('users:write')
  @ApiOperation({ summary: 'Replace a user' })
  @ApiIdParam()
  @ApiIfMatch()
  @ApiOkResponse({
    type: UserResponseDto,
    headers: ETAG_HEADER,
    description: 'full replacement: absent email clears it, absent role resets it',
  })
  @ApiErrors(400, 404, 409, 412, 413, 415, 503)
  async replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: CreateUserDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<UserResponseDto> {
    return tagged(response, await this.usersService.replace(id, dto, parseIfMatch(ifMatch, id)));
  }

  @Patch(':id')
  @RequiredScope('users:write')
  @ApiOperation({ summary: 'Update some fields of a user' })
  @ApiIdParam()
  @ApiIfMatch()
  @ApiOkResponse({
    type: UserResponseDto,
    headers: ETAG_HEADER,
    description: 'merge: only the sent fields change',
  })
  @ApiErrors(400, 404, 409, 412, 413, 415, 503)
  async update(
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: UpdateUserDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<UserResponseDto> {
    return tagged(response, await this.usersService.update(id, dto, parseIfMatch(ifMatch, id)));
  }

  @Delete(':id')
  @RequiredScope('users:write')
  @ApiOperation({ summary: 'Delete a user and their posts' })
  @ApiIdParam()
  @ApiIfMatch()
  @ApiNoContentResponse({ description: "deleted, with the user's posts" })
  @ApiErrors(400, 404, 412, 503)
  @HttpCode(HttpStatus.NO_CONTENT)
  async remove(
    @Param('id', ParseIdPipe) id: number,
    @Headers('if-match') ifMatch: string | undefined,
  ): Promise<void> {
    await this.usersService.remove(id, parseIfMatch(ifMatch, id));
  }
}

function tagged(response: Response, user: User): UserResponseDto {
  response.setHeader('ETag', etagOf(user));
  return UserResponseDto.from(user);
}
