import { classify, reads, StatementRefusedError, verbsOf } from './statement.js';

// What the database client does with each shape of statement text: `commit` and `other` (outside
// a transaction block) are never cancelled by the statement timeout; `read` and `control` may be.
describe('the shapes of statement the client tells apart', () => {
  const shapes: [string, string, string, boolean][] = [
    // [shape, kind, text, marked as a read]
    ['a COMMIT', 'commit', 'COMMIT', false],
    ['END, COMMIT by another name', 'commit', 'end', false],
    ['COMMIT AND CHAIN', 'commit', 'COMMIT AND CHAIN', false],
    [
      'statements sent with their COMMIT',
      'commit',
      'BEGIN; INSERT INTO t VALUES (1); COMMIT',
      false,
    ],
    [
      'a rollback and a new transaction',
      'commit',
      'ROLLBACK; BEGIN; DELETE FROM t; COMMIT;',
      false,
    ],
    ['BEGIN', 'control', 'BEGIN', false],
    ['START TRANSACTION', 'control', 'START TRANSACTION ISOLATION LEVEL SERIALIZABLE', false],
    ['ROLLBACK', 'control', 'ROLLBACK', false],
    ['a savepoint', 'control', 'SAVEPOINT s1', false],
    ['a SELECT its author marked as a read', 'read', 'SELECT * FROM users WHERE id = $1', true],
    [
      'a SELECT of a function that writes, unmarked',
      'other',
      'SELECT user_changes_purge($1, $2)',
      false,
    ],
    ['an unmarked SELECT', 'other', 'SELECT 1', false],
    ['an INSERT', 'other', 'INSERT INTO t VALUES ($1)', false],
    ['a data-modifying CTE', 'other', 'WITH d AS (DELETE FROM t RETURNING 1) SELECT 1', false],
    ['a CALL', 'other', 'CALL p()', false],
    ['a trailing semicolon and comment', 'read', 'SELECT 1; -- done', true],
  ];

  it.each(shapes)('%s is "%s"', (_shape, kind, text, marked) => {
    expect(classify(text, marked).kind).toBe(kind);
  });

  it('knows which statements leave a transaction block open behind them', () => {
    expect(classify('BEGIN', false).opens).toBe(true);
    expect(classify('START TRANSACTION', false).opens).toBe(true);
    expect(classify('BEGIN; SELECT 1; COMMIT', false).opens).toBe(false);
    expect(classify('SELECT 1', true).opens).toBe(false);
  });

  it.each([
    ['a read followed by a write', 'SELECT 1; DELETE FROM t'],
    ['a write and then a read', 'UPDATE t SET a = 1; SELECT 1'],
    ['a COMMIT in the middle', 'COMMIT; INSERT INTO t VALUES (1)'],
    ['statements that leave a transaction open', 'ROLLBACK; BEGIN'],
  ])('refuses several statements not ending with COMMIT: %s', (_shape, text) => {
    expect(() => classify(text, false)).toThrow(StatementRefusedError);
    expect(() => classify(text, true)).toThrow(StatementRefusedError);
  });
});

describe(verbsOf.name, () => {
  it('counts no semicolon or word inside literals, quoted names, dollar quotes or comments', () => {
    expect(verbsOf(`SELECT 'a; DELETE FROM t' AS x`)).toEqual(['SELECT']);
    expect(verbsOf(`SELECT 'it''s; fine'`)).toEqual(['SELECT']);
    expect(verbsOf(`SELECT E'\\'; DELETE'`)).toEqual(['SELECT']);
    expect(verbsOf(`SELECT 1 AS "a;b"`)).toEqual(['SELECT']);
    expect(verbsOf(`DO $body$ BEGIN DELETE FROM t; END $body$`)).toEqual(['DO']);
    expect(verbsOf(`CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql`)).toEqual([
      'CREATE',
    ]);
    expect(verbsOf(`SELECT 1 -- ; DELETE\n`)).toEqual(['SELECT']);
    expect(verbsOf(`/* a /* nested */ ; */ SELECT $1`)).toEqual(['SELECT']);
  });

  it('names every statement of a message, in order, and none for empty ones', () => {
    expect(verbsOf('begin; insert into t values (1);; commit;')).toEqual([
      'BEGIN',
      'INSERT',
      'COMMIT',
    ]);
    expect(verbsOf(' ; ')).toEqual([]);
  });

  it('tells a parameter or a name containing $ from a dollar quote', () => {
    expect(verbsOf('SELECT $1; COMMIT')).toEqual(['SELECT', 'COMMIT']);
    expect(verbsOf('SELECT a$b$c FROM t; COMMIT')).toEqual(['SELECT', 'COMMIT']);
  });
});

describe(reads.name, () => {
  it('marks one statement that starts as a read does', () => {
    expect(reads('WITH x AS (SELECT 1) SELECT * FROM x')).toEqual({
      text: 'WITH x AS (SELECT 1) SELECT * FROM x',
      reads: true,
    });
  });

  it.each([
    ['a write', 'DELETE FROM t'],
    ['several statements', 'SELECT 1; SELECT 2'],
    ['nothing', ''],
  ])('refuses to mark %s', (_shape, text) => {
    expect(() => reads(text)).toThrow(/marked as a read/);
  });
});
