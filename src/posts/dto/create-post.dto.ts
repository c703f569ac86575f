import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { POST_BODY_PATTERN, TITLE_PATTERN } from '../../common/patterns.js';
import { IsOmittable, IsText } from '../../http/validators.js';

export class CreatePostDto {
  @ApiProperty({
    pattern: TITLE_PATTERN.source,
    example: 'Hello',
    description: '1 to 200 characters once trimmed (stored trimmed); no NUL',
  })
  @IsText(1, 200, { trim: true })
  title: string;

  @ApiPropertyOptional({
    maxLength: 10_000,
    pattern: POST_BODY_PATTERN.source,
    default: '',
    description: 'at most 10,000 characters; no NUL',
  })
  @IsOmittable()
  @IsText(0, 10_000)
  body?: string;
}
