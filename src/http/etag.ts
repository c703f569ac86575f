/**
 * Strong ETags of users and posts, derived from the row's `version`, which the database increments
 * on every update of the row (a trigger, so writes from outside the service count too). A
 * representation changes exactly when its version does.
 */
function etagOf({ id, version }: { id: number; version: number }): string {
  return `"${id}.${version}"`;
}

/** The entity tags listed in an If-Match or If-None-Match header; `*` is returned alone. */
function listedTags(header: string): string[] | '*' {
  if (header.trim() === '*') return '*';
  return header
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag.length > 0);
}

/**
 * If-Match of a write to the resource with this id: undefined without the header (the write is
 * unconditional), `*` for any existing version, else the versions the client accepts. If-Match
 * compares strongly: a weak tag (`W/"…"`) or another resource's tag matches nothing.
 */
export function parseIfMatch(header: string | undefined, id: number): number[] | '*' | undefined {
  if (header === undefined) return undefined;
  const tags = listedTags(header);
  if (tags === '*') return '*';
  const versions: number[] = [];
  for (const tag of tags) {
    const match = /^"(\d+)\.(\d+)"$/.exec(tag);
    if (match && Number(match[1]) === id && match[2].length <= 10) versions.push(Number(match[2]));
  }
  return versions;
}

/** If-None-Match of a GET: true when it matches the current tag (weak comparison, or `*`). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = listedTags(header);
  return tags === '*' || tags.some((tag) => tag.replace(/^W\//, '') === etag);
}

/**
 * The ETag a response body carries for describeResource (etag.decorators.ts), under a symbol: JSON.stringify skips
 * symbol keys, so the tag never reaches the body itself.
 */
export const ENTITY_TAG = Symbol('entityTag');

/** Marks `body` as the representation of `entity`: the response gets the entity's ETag. */
export function tagged<T extends object>(body: T, entity: { id: number; version: number }): T {
  (body as { [ENTITY_TAG]?: string })[ENTITY_TAG] = etagOf(entity);
  return body;
}

/** The ETag `tagged()` put on a body, if any. */
export function tagOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  return (body as { [ENTITY_TAG]?: string })[ENTITY_TAG];
}
