import type { Post } from '../post.entity.js';

export class PostResponseDto {
  id: number;
  userId: number;
  title: string;
  body: string;
  createdAt: string;
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
