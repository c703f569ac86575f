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
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  ApiErrors,
  ApiIdParam,
  LOCATION_HEADER,
  PAGE_HEADERS,
} from '../common/openapi.decorators.js';
import { setPaginationHeaders } from '../common/pagination.js';
import { ParseIdPipe } from '../common/parse-id.pipe.js';
import { CreateUserDto } from './dto/create-user.dto.js';
import { ListUsersQueryDto } from './dto/list-users-query.dto.js';
import { UpdateUserDto } from './dto/update-user.dto.js';
import { UserResponseDto } from './dto/user-response.dto.js';
import { UsersService } from './users.service.js';

@ApiTags('users')
@Controller('users')
export class UsersController {
  constructor(private readonly usersService: UsersService) {}

  @Get()
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
  @ApiIdParam()
  @ApiOkResponse({ type: UserResponseDto })
  @ApiErrors(400, 404, 503)
  async findOne(@Param('id', ParseIdPipe) id: number): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.usersService.findOne(id));
  }

  @Post()
  @ApiCreatedResponse({ type: UserResponseDto, headers: LOCATION_HEADER })
  @ApiErrors(400, 409, 413, 415, 503)
  async create(
    @Body() dto: CreateUserDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<UserResponseDto> {
    const user = await this.usersService.create(dto);
    response.location(`/users/${user.id}`);
    return UserResponseDto.from(user);
  }

  @Put(':id')
  @ApiIdParam()
  @ApiOkResponse({
    type: UserResponseDto,
    description: 'full replacement: absent email clears it, absent role resets it',
  })
  @ApiErrors(400, 404, 409, 413, 415, 503)
  async replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: CreateUserDto,
  ): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.usersService.replace(id, dto));
  }

  @Patch(':id')
  @ApiIdParam()
  @ApiOkResponse({ type: UserResponseDto, description: 'merge: only the sent fields change' })
  @ApiErrors(400, 404, 409, 413, 415, 503)
  async update(
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: UpdateUserDto,
  ): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.usersService.update(id, dto));
  }

  @Delete(':id')
  @ApiIdParam()
  @ApiNoContentResponse({ description: "deleted, with the user's posts" })
  @ApiErrors(400, 404, 503)
  @HttpCode(HttpStatus.NO_CONTENT)
  async remove(@Param('id', ParseIdPipe) id: number): Promise<void> {
    await this.usersService.remove(id);
  }
}
