import type { User } from '../user.entity.js';

/** A user as the HTTP API returns it: `email` is left out when the user has none. */
export class UserResponseDto {
  id: number;
  name: string;
  email?: string;
  role: string;
  createdAt: string;
  updatedAt: string;

  static from(user: User): UserResponseDto {
    const dto = new UserResponseDto();
    dto.id = user.id;
    dto.name = user.name;
    if (user.email !== null) dto.email = user.email;
    dto.role = user.role;
    dto.createdAt = user.createdAt.toISOString();
    dto.updatedAt = user.updatedAt.toISOString();
    return dto;
  }
}
