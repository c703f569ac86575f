import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { NAME_PATTERN, ROLE_PATTERN } from '../../common/patterns.js';
import { CodePointLength, IsEmailAddress, IsOmittable, IsText } from '../../http/validators.js';

export const ROLE_MESSAGE = 'role must be 1 to 32 characters of a-z, 0-9, _ and -';

/**
 * The body of POST /users and PUT /users/:id (a full representation: on PUT an absent email
 * clears it and an absent role resets it to the default).
 */
export class CreateUserDto {
  @ApiProperty({
    pattern: NAME_PATTERN.source,
    example: 'Ada Lovelace',
    description: '1 to 100 characters once trimmed (stored trimmed); no NUL',
  })
  @IsText(1, 100, { trim: true })
  name: string;

  // null means "no email"; IsOptional skips the other rules for null and undefined.
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    format: 'email',
    minLength: 1,
    maxLength: 254,
    example: 'ada@example.com',
    description: 'unique ignoring case; null or absent: none',
  })
  @IsOptional()
  @CodePointLength(1, 254)
  @IsEmailAddress()
  email?: string | null;

  @ApiPropertyOptional({ pattern: ROLE_PATTERN.source, default: 'member', example: 'admin' })
  @IsOmittable()
  @Matches(ROLE_PATTERN, { message: ROLE_MESSAGE })
  role?: string;
}
