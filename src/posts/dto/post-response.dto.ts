import { ApiProperty } from '@nestjs/swagger';
import { tagged } from '../../http/etag.js';
import { ApiIdProperty, ApiTimestampProperty } from '../../http/openapi.decorators.js';
import type { Post } from '../post.entity.js';

/** A post as the HTTP API returns it, carrying its ETag for `@ConditionalGet()` (not in the JSON). */
export class PostResponseDto {
  @ApiIdProperty('assigned by the service', 12)
  id: number;

  @ApiIdProperty('the owner, from the path', 7)
  userId: number;

  @ApiProperty({ example: 'Hello' })
  title: string;

  @ApiProperty({ example: '' })
  body: string;

  @ApiTimestampProperty('set by the service when created')
  createdAt: string;

  @ApiTimestampProperty('set by the service on every change')
  updatedAt: string;

  static from(post: Post): PostResponseDto {
    const dto = new PostResponseDto();
    dto.id = post.id;
    dto.userId = post.userId;
    dto.title = post.title;
    dto.body = post.body;
    dto.createdAt = post.createdAt.toISOString();
    dto.updatedAt = post.updatedAt.toISOString();
    return tagged(dto, post);
  }
}
