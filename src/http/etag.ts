/**
 * Strong ETags of users and posts, derived from the row's `version`, which the database increments
 * on every update of the row (a trigger, so writes from outside the service count too). A
 * representation changes exactly when its version does.
 */
export function etagOf({ id, version }: { id: number; version: number }): string {
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
 * Answers a GET of a tagged resource: sets ETag, and when If-None-Match matches it, 304 without
 * a body (returns undefined); else returns the body.
 */
export function conditionalGet<T>(
  response: { setHeader(name: string, value: string): unknown; status(code: number): unknown },
  etag: string,
  ifNoneMatch: string | undefined,
  body: () => T,
): T | undefined {
  response.setHeader('ETag', etag);
  if (!matchesIfNoneMatch(ifNoneMatch, etag)) return body();
  response.status(304);
  return undefined;
}
