import { IsOmittable, IsText } from '../../common/validators.js';

export class CreatePostDto {
  @IsText(1, 200, { trim: true })
  title: string;

  @IsOmittable()
  @IsText(0, 10_000)
  body?: string;
}
