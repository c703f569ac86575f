/**
 * Exact row counts of the lists the API offers, read in O(1). The database keeps them: the table
 * `list_counts` and its triggers come from migration 1718000000002 (ListCountsAndKeysetIndexes),
 * so rows written by anything (the service, a bulk load, a DBA) are counted. A list's count is
 * the sum of its slots.
 */
export const LIST_COUNT_SQL =
  'SELECT coalesce(sum("n"), 0)::int AS "total" FROM "list_counts" WHERE "list" = $1';

/** The keys the triggers maintain. */
export const listCountKey = {
  users: (role?: string) => (role === undefined ? 'users' : `users.role:${role}`),
  postsOfUser: (userId: number) => `posts.user:${userId}`,
};

/** Anything that runs SQL: a repository, an entity manager, a query runner. */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

export async function countList(db: Queryable, key: string): Promise<number> {
  const [row] = (await db.query(LIST_COUNT_SQL, [key])) as { total: number }[];
  return row.total;
}
