import { BadRequestException } from '@nestjs/common';
import { ListPostsQueryDto } from '../posts/dto/list-posts-query.dto.js';
import { ListUsersQueryDto } from '../users/dto/list-users-query.dto.js';
import { AppValidationPipe } from './app-validation.pipe.js';

describe(AppValidationPipe.name, () => {
  const pipe = new AppValidationPipe();

  it.each([ListUsersQueryDto, ListPostsQueryDto])(
    'answers an empty query of %p with the DTO full validation gives it',
    async (metatype) => {
      const query = (value: object) => pipe.transform(value, { type: 'query', metatype });
      const empty = await query({});
      // Unknown parameters are dropped, so this one is validated in full and ends up empty.
      const validated = await query({ unknown: 'x' });
      expect(empty).toBeInstanceOf(metatype);
      expect(validated).toBeInstanceOf(metatype);
      expect(empty).toEqual(validated);
      expect(empty).toEqual(Object.assign(new metatype(), { limit: 20, sort: [] }));
    },
  );

  it('still refuses a query that breaks a rule', async () => {
    await expect(
      pipe.transform({ limit: '0' }, { type: 'query', metatype: ListUsersQueryDto }),
    ).rejects.toThrow(new BadRequestException('limit must be an integer between 1 and 100'));
  });
});
