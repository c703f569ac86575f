import { ApiProperty } from '@nestjs/swagger';
import type { Post } from '../post.entity.js';

export class PostResponseDto {
  @ApiProperty({ example: 12 })
  id: number;

  @ApiProperty({ example: 7 })
  userId: number;

  @ApiProperty({ example: 'Hello' })
  title: string;

  @ApiProperty({ example: '' })
  body: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt: string;

  static from(post: Post): PostResponseDto {
    const dto = new PostResponseDto();
    dto.id = post.id;
    dto.userId = post.userId;
    dto.title = post.title;
    dto.body = post.body;
    dto.createdAt = post.createdAt.toISOString();
    dto.updatedAt = post.updatedAt.toISOString();
    return dto;
  }
}
