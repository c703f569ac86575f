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
  Req,
  Res,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { ParseListQueryPipe } from '../common/list-query.js';
import { setPaginationHeaders } from '../common/pagination.js';
import { ParseIdPipe } from '../common/parse-id.pipe.js';
import { CreateUserDto } from './dto/create-user.dto.js';
import { UpdateUserDto } from './dto/update-user.dto.js';
import { UserResponseDto } from './dto/user-response.dto.js';
import { USER_LIST_SPEC, type UserListQuery, UsersService } from './users.service.js';

@Controller('users')
export class UsersController {
  constructor(private readonly usersService: UsersService) {}

  @Get()
  async findAll(
    @Query(new ParseListQueryPipe(USER_LIST_SPEC)) query: UserListQuery,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<UserResponseDto[]> {
    const { items, total } = await this.usersService.findAll(query);
    setPaginationHeaders(request, response, query, total);
    return items.map(UserResponseDto.from);
  }

  @Get(':id')
  async findOne(@Param('id', ParseIdPipe) id: number): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.usersService.findOne(id));
  }

  @Post()
  async create(
    @Body() dto: CreateUserDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<UserResponseDto> {
    const user = await this.usersService.create(dto);
    response.location(`/users/${user.id}`);
    return UserResponseDto.from(user);
  }

  @Put(':id')
  async replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: CreateUserDto,
  ): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.usersService.replace(id, dto));
  }

  @Patch(':id')
  async update(
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: UpdateUserDto,
  ): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.usersService.update(id, dto));
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  async remove(@Param('id', ParseIdPipe) id: number): Promise<void> {
    await this.usersService.remove(id);
  }
}
