import { ListQueryDto, QueryFilter, QuerySort, type SortKey } from '../../lists/list-query.dto.js';
import { ROLE_PATTERN } from '../../common/patterns.js';
import { ROLE_MESSAGE } from './create-user.dto.js';

export const USER_SORT_FIELDS = ['id', 'name', 'email', 'role', 'createdAt', 'updatedAt'] as const;
export type UserSortField = (typeof USER_SORT_FIELDS)[number];

/** The query of `GET /users`. */
export class ListUsersQueryDto extends ListQueryDto<UserSortField> {
  @QueryFilter(ROLE_PATTERN, ROLE_MESSAGE, 'only users with this role (exact match)')
  role?: string;

  @QueryFilter(/^(?:true|false)$/, 'active must be true or false', 'only active or inactive users')
  active?: 'true' | 'false';

  @QuerySort(USER_SORT_FIELDS)
  sort: SortKey<UserSortField>[] = [];
}
