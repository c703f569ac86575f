import { ListQueryDto, QuerySort, type SortKey } from '../../lists/list-query.dto.js';

export const POST_SORT_FIELDS = ['id', 'title', 'createdAt', 'updatedAt'] as const;
export type PostSortField = (typeof POST_SORT_FIELDS)[number];

/** The query of `GET /users/:id/posts`. */
export class ListPostsQueryDto extends ListQueryDto<PostSortField> {
  @QuerySort(POST_SORT_FIELDS)
  sort: SortKey<PostSortField>[] = [];
}
