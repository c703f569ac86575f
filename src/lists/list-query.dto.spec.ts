import { BadRequestException } from '@nestjs/common';
import { ListUsersQueryDto } from '../users/dto/list-users-query.dto.js';
import { AppValidationPipe } from '../http/app-validation.pipe.js';

const pipe = new AppValidationPipe();
const parse = (raw: Record<string, unknown>) =>
  pipe.transform(raw, { type: 'query', metatype: ListUsersQueryDto }) as Promise<ListUsersQueryDto>;

describe(ListUsersQueryDto.name, () => {
  it('applies the defaults', async () => {
    expect({ ...(await parse({})) }).toEqual({ limit: 20, sort: [] });
  });

  it('parses page, limit, sort and filters, ignoring unknown parameters', async () => {
    expect({
      ...(await parse({
        page: '3',
        limit: '100',
        sort: '-createdAt,name',
        role: 'admin',
        x: ['1', '2'],
      })),
    }).toEqual({
      page: 3,
      limit: 100,
      sort: [
        { field: 'createdAt', direction: 'DESC' },
        { field: 'name', direction: 'ASC' },
      ],
      role: 'admin',
    });
  });

  it('takes an empty cursor as the start of a walk', async () => {
    expect({ ...(await parse({ cursor: '' })) }).toEqual({ limit: 20, sort: [], cursor: '' });
  });

  it.each([
    [{ page: '0' }, 'page must be an integer between 1 and 1000000'],
    [{ page: '1000001' }, 'page must be an integer between 1 and 1000000'],
    [{ page: '007' }, 'page must be an integer between 1 and 1000000'],
    [{ limit: '101' }, 'limit must be an integer between 1 and 100'],
    [{ limit: ' 5' }, 'limit must be an integer between 1 and 100'],
    [{ limit: '5 ' }, 'limit must be an integer between 1 and 100'],
    [{ limit: '1e1' }, 'limit must be an integer between 1 and 100'],
    [{ limit: ['1', '2'] }, 'query parameter limit must be given at most once'],
    [{ role: 'Admin' }, 'role must be 1 to 32 characters of a-z, 0-9, _ and -'],
    [{ role: ['a', 'b'] }, 'query parameter role must be given at most once'],
    [{ sort: '' }, 'sort must not contain an empty field'],
    [{ sort: ',name' }, 'sort must not contain an empty field'],
    [
      { sort: '--name' },
      'sort field -name is not one of id, name, email, role, createdAt, updatedAt',
    ],
    [{ sort: 'name,-name' }, 'sort field name is named twice'],
    [{ sort: 'NAME' }, 'sort field NAME is not one of id, name, email, role, createdAt, updatedAt'],
    [
      { sort: 'constructor' },
      'sort field constructor is not one of id, name, email, role, createdAt, updatedAt',
    ],
    [{ sort: ['id', 'name'] }, 'query parameter sort must be given at most once'],
    [{ cursor: ['', ''] }, 'query parameter cursor must be given at most once'],
    [{ cursor: '', page: '1' }, 'cursor is invalid together with page: send one of them'],
    [{ cursor: 'a b' }, 'cursor is invalid: send the token of a rel="next" link as it is'],
  ])('rejects %j', async (raw, message) => {
    await expect(parse(raw)).rejects.toEqual(new BadRequestException(message));
  });
});
