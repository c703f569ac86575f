import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { tagged } from '../../http/etag.js';
import { ApiIdProperty, ApiTimestampProperty } from '../../http/openapi.decorators.js';
import type { User } from '../user.entity.js';

/**
 * A user as the HTTP API returns it: `email` is left out when the user has none. It carries the
 * user's ETag for `@ConditionalGet()` and the writes' decorators (not in the JSON).
 */
export class UserResponseDto {
  @ApiIdProperty('assigned by the service', 1)
  id: number;

  @ApiProperty({ example: 'Ada Lovelace' })
  name: string;

  @ApiPropertyOptional({ format: 'email', description: 'absent when the user has none' })
  email?: string;

  @ApiProperty({ example: 'member' })
  role: string;

  @ApiProperty({
    example: true,
    description: 'false once the identity provider deactivated the user (docs/provisioning.md)',
  })
  active: boolean;

  @ApiTimestampProperty('set by the service when created')
  createdAt: string;

  @ApiTimestampProperty('set by the service on every change')
  updatedAt: string;

  static from(user: User): UserResponseDto {
    const dto = new UserResponseDto();
    dto.id = user.id;
    dto.name = user.name;
    if (user.email !== null) dto.email = user.email;
    dto.role = user.role;
    dto.active = user.active;
    dto.createdAt = user.createdAt.toISOString();
    dto.updatedAt = user.updatedAt.toISOString();
    return tagged(dto, user);
  }
}
