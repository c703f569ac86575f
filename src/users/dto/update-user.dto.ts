import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { NAME_PATTERN, ROLE_PATTERN } from '../../common/patterns.js';
import { CodePointLength, IsEmailAddress, IsOmittable, IsText } from '../../http/validators.js';
import { ROLE_MESSAGE } from './create-user.dto.js';

/** The body of PATCH /users/:id: only the sent fields change; `"email": null` clears the email. */
export class UpdateUserDto {
  @ApiPropertyOptional({
    pattern: NAME_PATTERN.source,
    example: 'Ada Lovelace',
    description: '1 to 100 characters once trimmed (stored trimmed); no NUL',
  })
  @IsOmittable()
  @IsText(1, 100, { trim: true })
  name?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    format: 'email',
    minLength: 1,
    maxLength: 254,
    description: 'null clears the email',
  })
  @IsOptional()
  @CodePointLength(1, 254)
  @IsEmailAddress()
  email?: string | null;

  @ApiPropertyOptional({ pattern: ROLE_PATTERN.source })
  @IsOmittable()
  @Matches(ROLE_PATTERN, { message: ROLE_MESSAGE })
  role?: string;
}
