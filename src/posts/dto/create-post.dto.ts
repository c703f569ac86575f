import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOmittable, IsText } from '../../http/validators.js';

export class CreatePostDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Hello', description: 'trimmed' })
  @IsText(1, 200, { trim: true })
  title: string;

  @ApiPropertyOptional({ maxLength: 10_000, default: '' })
  @IsOmittable()
  @IsText(0, 10_000)
  body?: string;
}
