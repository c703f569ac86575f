// What must never reach a client, in a response body, a gRPC status message or a log line a
// client can see: stack frames, SQL and database errors, ORM and driver names, file paths and
// connection strings. The fuzz and security tests check the answers they get against this list.
/** @type {readonly RegExp[]} */
export const LEAK_PATTERNS = [
  // stack traces
  /\n\s+at /,
  /\bat [\w.<>]+ \(/,
  /Maximum call stack/,
  /\b(?:Type|Range|Reference|Syntax)Error\b/,
  // SQL, in both spellings: a request that names `select` in lower case (a fuzzed field) must not
  // excuse an upper-case SELECT in the answer (see findLeak)
  /\bSELECT\b/,
  /\bSELECT\b/i,
  /\bINSERT INTO\b/,
  /\bINSERT\b/i,
  /\bUPDATE "/,
  /\bDELETE FROM\b/,
  /\bFROM "?users/i,
  // PostgreSQL's own messages
  /relation "/,
  /relation/i,
  /column/i,
  /does not exist/i,
  /violates/,
  /duplicate key/,
  /syntax error/,
  // the ORM and the driver
  /QueryFailedError/,
  /TypeORM/,
  /pg-protocol/,
  // paths of the deployment and of source files
  /\/work\//,
  /node_modules/,
  /\.[tj]s:\d/,
  /dist\/src/,
  // connection strings (they carry the database password)
  /postgres(?:ql)?:\/\//,
];

/**
 * The first pattern that `text` matches, or undefined. A pattern that `sent` (the request, as
 * text) matches too is passed over: some errors rightly name what the client sent ("sort field X
 * is not one of …", "no route for GET /x").
 * @param {string} text
 * @param {string} [sent]
 * @returns {RegExp | undefined}
 */
export function findLeak(text, sent = '') {
  return LEAK_PATTERNS.find((pattern) => pattern.test(text) && !pattern.test(sent));
}
