import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Put,
  Query,
} from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ConditionalGet, ConditionalWrite, Created, IfMatch } from '../http/etag.decorators.js';
import { ApiErrors, ApiIdParam, ApiIfMatch } from '../http/openapi.decorators.js';
import { ParseIdPipe } from '../http/parse-id.pipe.js';
import { Idempotent } from '../idempotency/idempotency.interceptor.js';
import { CHANGES_TOKEN_HEADER, Listed } from '../lists/list-headers.js';
import { type ListPage, mapPage } from '../lists/list-plan.js';
import { RequiredScope } from '../auth/auth.decorators.js';
import { CreateUserDto } from './dto/create-user.dto.js';
import { ListUsersQueryDto } from './dto/list-users-query.dto.js';
import { UpdateUserDto } from './dto/update-user.dto.js';
import { UserResponseDto } from './dto/user-response.dto.js';
import { type IfMatch as IfMatchValue, UsersService } from './users.service.js';

@ApiTags('users')
@Controller('users')
export class UsersController {
  constructor(private readonly usersService: UsersService) {}

  @Get()
  @RequiredScope('users:read')
  @ApiOperation({ summary: 'List users (page numbers or a cursor walk)' })
  @Listed(UserResponseDto, CHANGES_TOKEN_HEADER)
  @ApiErrors(400, 503)
  async findAll(@Query() query: ListUsersQueryDto): Promise<ListPage<UserResponseDto>> {
    return mapPage(await this.usersService.findAll(query), UserResponseDto.from);
  }

  @Get(':id')
  @RequiredScope('users:read')
  @ApiOperation({ summary: 'Get a user' })
  @ApiIdParam()
  @ConditionalGet(UserResponseDto)
  @ApiErrors(400, 404, 503)
  async findOne(@Param('id', ParseIdPipe) id: number): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.usersService.findOne(id));
  }

  @Post()
  @RequiredScope('users:write')
  @ApiOperation({ summary: 'Create a user' })
  @Idempotent()
  @Created(UserResponseDto, (user) => `/users/${user.id}`)
  @ApiErrors(400, 409, 413, 415, 422, 503)
  async create(@Body() dto: CreateUserDto): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.usersService.create(dto));
  }

  @Put(':id')
  @RequiredScope('users:write')
  @ApiOperation({ summary: 'Replace a user' })
  @ApiIdParam()
  @ConditionalWrite(
    UserResponseDto,
    'full replacement: absent email clears it, absent role resets it',
  )
  @ApiErrors(400, 404, 409, 412, 413, 415, 503)
  async replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: CreateUserDto,
    @IfMatch() ifMatch: IfMatchValue | undefined,
  ): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.usersService.replace(id, dto, ifMatch));
  }

  @Patch(':id')
  @RequiredScope('users:write')
  @ApiOperation({ summary: 'Update some fields of a user' })
  @ApiIdParam()
  @ConditionalWrite(UserResponseDto, 'merge: only the sent fields change')
  @ApiErrors(400, 404, 409, 412, 413, 415, 503)
  async update(
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: UpdateUserDto,
    @IfMatch() ifMatch: IfMatchValue | undefined,
  ): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.usersService.update(id, dto, ifMatch));
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
    @IfMatch() ifMatch: IfMatchValue | undefined,
  ): Promise<void> {
    await this.usersService.remove(id, ifMatch);
  }
}
