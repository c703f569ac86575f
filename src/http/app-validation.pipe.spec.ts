import { BadRequestException } from '@nestjs/common';
import { ListPostsQueryDto } from '../posts/dto/list-posts-query.dto.js';
import { ListUsersQueryDto } from '../users/dto/list-users-query.dto.js';
import { AppValidationPipe, REMEMBERED_QUERIES_MAX } from './app-validation.pipe.js';

const asQuery = (metatype: new () => unknown) => ({ type: 'query' as const, metatype });

describe(AppValidationPipe.name, () => {
  it('answers a repeated query with the DTO it validated the first time, frozen', async () => {
    const pipe = new AppValidationPipe();
    const query = { role: 'admin', sort: '-createdAt', limit: '5' };
    const first = await pipe.transform({ ...query }, asQuery(ListUsersQueryDto));
    expect(first).toBeInstanceOf(ListUsersQueryDto);
    expect(first).toEqual(
      Object.assign(new ListUsersQueryDto(), {
        role: 'admin',
        limit: 5,
        sort: [{ field: 'createdAt', direction: 'DESC' }],
      }),
    );
    expect(await pipe.transform({ ...query }, asQuery(ListUsersQueryDto))).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen((first as ListUsersQueryDto).sort[0])).toBe(true);
    // Another class with the same query string is validated against its own rules.
    await expect(pipe.transform({ sort: 'role' }, asQuery(ListPostsQueryDto))).rejects.toThrow(
      BadRequestException,
    );
    expect(await pipe.transform({ sort: 'role' }, asQuery(ListUsersQueryDto))).toEqual(
      Object.assign(new ListUsersQueryDto(), { sort: [{ field: 'role', direction: 'ASC' }] }),
    );
  });

  it('refuses a query that breaks a rule every time it comes', async () => {
    const pipe = new AppValidationPipe();
    for (let i = 0; i < 2; i++) {
      await expect(pipe.transform({ limit: '0' }, asQuery(ListUsersQueryDto))).rejects.toThrow(
        new BadRequestException('limit must be an integer between 1 and 100'),
      );
    }
  });

  it(`remembers at most ${REMEMBERED_QUERIES_MAX} queries per DTO class, forgetting the oldest`, async () => {
    const pipe = new AppValidationPipe();
    const page = (n: number) => pipe.transform({ page: String(n) }, asQuery(ListPostsQueryDto));
    const first = await page(1);
    for (let n = 2; n <= REMEMBERED_QUERIES_MAX + 1; n++) await page(n);
    const again = await page(1);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    expect(await page(1)).toBe(again);
  });

  it.each([ListUsersQueryDto, ListPostsQueryDto])(
    'gives an empty query of %p the DTO defaults',
    async (metatype) => {
      const empty = await new AppValidationPipe().transform({}, asQuery(metatype));
      expect(empty).toBeInstanceOf(metatype);
      expect(empty).toEqual(Object.assign(new metatype(), { limit: 20, sort: [] }));
    },
  );
});
