/**
 * What a statement sent to the primary can do to a transaction, decided by what its author says
 * rather than by its verb: `SELECT f()` commits when `f` writes, and a text of several statements
 * commits when the last one ends (a simple query outside a transaction block is one implicit
 * transaction). The database client needs to know, because a cancel that lands in a commit's
 * wait for the synchronous standby commits locally anyway (databaseClient).
 */

/** A statement its author marks as only reading (`reads(sql)`): a timeout may cancel it. */
export interface ReadStatement {
  readonly text: string;
  readonly reads: true;
}

/** What repositories send: SQL text, or a read marked as such. */
export type Statement = string | ReadStatement;

/**
 * How the client treats a statement:
 * - `commit`: ends with COMMIT or END, so its reply is a commit's, in a transaction block or not;
 * - `control`: opens or rolls back a transaction block or a savepoint, and commits nothing;
 * - `read`: marked by its author (`reads`), commits nothing even outside a transaction block;
 * - `other`: anything else, which commits by itself when sent outside a transaction block.
 */
export type StatementKind = 'commit' | 'control' | 'read' | 'other';

/** A statement a read mark may start with; a mark on anything else is a mistake, refused. */
const READ_VERBS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'SHOW']);
const COMMIT_VERBS = new Set(['COMMIT', 'END']);
const CONTROL_VERBS = new Set(['BEGIN', 'START', 'ROLLBACK', 'ABORT', 'SAVEPOINT', 'RELEASE']);
const OPEN_VERBS = new Set(['BEGIN', 'START']);

/** verbsOf's answers, by text: the service sends the same few texts over and over. */
const verbsByText = new Map<string, readonly string[]>();
/** Beyond this many texts (statements built per request vary), the remembered ones are dropped. */
const MAX_REMEMBERED = 1000;

/** verbsOf, computed once per text. */
function rememberedVerbsOf(text: string): readonly string[] {
  let verbs = verbsByText.get(text);
  if (verbs === undefined) {
    if (verbsByText.size >= MAX_REMEMBERED) verbsByText.clear();
    verbs = verbsOf(text);
    verbsByText.set(text, verbs);
  }
  return verbs;
}

/** Marks `text` as a statement that only reads (one statement, starting with SELECT, WITH, …). */
export function reads(text: string): ReadStatement {
  const verbs = rememberedVerbsOf(text);
  if (verbs.length !== 1 || !READ_VERBS.has(verbs[0])) {
    throw new Error(
      `a statement marked as a read must be one statement starting with ${[...READ_VERBS].join(', ')}: ${text}`,
    );
  }
  return { text, reads: true };
}

export function textOf(statement: Statement): string {
  return typeof statement === 'string' ? statement : statement.text;
}

/** The statement and its parameters as pg's query config, carrying the read mark. */
export function queryConfig(statement: Statement, values?: unknown[]) {
  return typeof statement === 'string'
    ? { text: statement, values }
    : { text: statement.text, values, reads: true as const };
}

/** Why a text is refused before it is sent. */
export class StatementRefusedError extends Error {
  override readonly name = 'StatementRefusedError';
}

/**
 * The kind of `text` (`marked` when its author marked it as a read), and whether its last
 * statement opens a transaction block. Refuses, by throwing StatementRefusedError, a text of
 * several statements whose last is not COMMIT: its implicit commit outside a block, or a COMMIT
 * in its middle, would commit without the client knowing.
 */
export function classify(text: string, marked: boolean): { kind: StatementKind; opens: boolean } {
  const verbs = rememberedVerbsOf(text);
  const last = verbs.at(-1) ?? '';
  if (verbs.length > 1 && !COMMIT_VERBS.has(last)) {
    throw new StatementRefusedError(
      `a message of several statements must end with COMMIT (it has ${verbs.join(', ')})`,
    );
  }
  const kind: StatementKind = COMMIT_VERBS.has(last)
    ? 'commit'
    : CONTROL_VERBS.has(last)
      ? 'control'
      : marked
        ? 'read'
        : 'other';
  return { kind, opens: OPEN_VERBS.has(last) };
}

/**
 * The first word of each statement in `text`, upper case, in order. Semicolons and words inside
 * string literals, quoted identifiers, dollar-quoted bodies and comments do not count; an empty
 * statement (`;;`, a trailing `;`) has no word.
 */
export function verbsOf(text: string): string[] {
  const verbs: string[] = [];
  let verb: string | undefined;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === ';') {
      if (verb !== undefined) verbs.push(verb);
      verb = undefined;
      i++;
    } else if (c === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (c === '/' && next === '*') {
      i = afterBlockComment(text, i);
    } else if (c === "'" || c === '"') {
      i = afterQuoted(
        text,
        i,
        c,
        c === "'" && /[eE]/.test(text[i - 1] ?? '') && !isWord(text[i - 2]),
      );
      verb ??= '';
    } else if (c === '$' && !isWord(text[i - 1])) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i, i + 64));
      if (tag) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        i = close < 0 ? text.length : close + tag[0].length;
      } else {
        i++;
      }
      verb ??= '';
    } else if (verb === undefined && /[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(text.slice(i, i + 64))![0];
      verb = word.toUpperCase();
      i += word.length;
    } else {
      if (verb === undefined && !/\s/.test(c)) verb = '';
      i++;
    }
  }
  if (verb !== undefined) verbs.push(verb);
  return verbs;
}

function isWord(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_$]/.test(c);
}

/** The index after a quoted string or identifier opened at `start` (a doubled quote escapes). */
function afterQuoted(text: string, start: number, quote: string, backslashes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    if (backslashes && text[i] === '\\') {
      i += 2;
    } else if (text[i] === quote) {
      if (text[i + 1] !== quote) return i + 1;
      i += 2;
    } else {
      i++;
    }
  }
  return i;
}

/** The index after a block comment opened at `start`; PostgreSQL's block comments nest. */
function afterBlockComment(text: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < text.length) {
    if (text[i] === '/' && text[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (text[i] === '*' && text[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return i;
}
