import { QueryFailedError } from 'typeorm';
import { isConnectionLost, isDatabaseUnavailable, isPrimaryAway } from './database-errors.js';

const pgError = (code: string) =>
  new QueryFailedError('UPDATE users SET name = $1', [], Object.assign(new Error('x'), { code }));

describe(isDatabaseUnavailable.name, () => {
  it('counts a write on a read-only node (25006, a standby or a failover) as unavailable: 503', () => {
    expect(isDatabaseUnavailable(pgError('25006'))).toBe(true);
  });

  it('counts a statement cancelled by the service or by statement_timeout (57014)', () => {
    expect(isDatabaseUnavailable(pgError('57014'))).toBe(true);
  });

  it('does not count a constraint violation', () => {
    expect(isDatabaseUnavailable(pgError('23505'))).toBe(false);
  });
});

describe(isConnectionLost.name, () => {
  it('counts a connection the server terminated (57P01) or that dropped mid-statement', () => {
    expect(isConnectionLost(pgError('57P01'))).toBe(true);
    expect(isConnectionLost(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('does not count a pool with no connection free in time, a timeout or a constraint', () => {
    expect(isConnectionLost(new Error('timeout exceeded when trying to connect'))).toBe(false);
    expect(isConnectionLost(pgError('57014'))).toBe(false);
    expect(isConnectionLost(pgError('23505'))).toBe(false);
  });
});

describe('the failure table: one code, three decisions', () => {
  const decisions = (error: unknown) => [
    isConnectionLost(error),
    isPrimaryAway(error),
    isDatabaseUnavailable(error),
  ];

  it.each([
    ['08006 (connection failure)', pgError('08006'), [true, true, true]],
    ['08007 (commit outcome unknown)', pgError('08007'), [true, true, true]],
    ['57P01 (admin shutdown)', pgError('57P01'), [true, true, true]],
    ['ECONNRESET', pgError('ECONNRESET'), [true, true, true]],
    ['25006 (read-only node)', pgError('25006'), [false, true, true]],
    ['ECONNREFUSED', pgError('ECONNREFUSED'), [false, true, true]],
    ['53300 (too many connections)', pgError('53300'), [false, false, true]],
    ['57014 (statement timeout)', pgError('57014'), [false, false, true]],
    ['ENOTFOUND', pgError('ENOTFOUND'), [false, false, true]],
    ['a full pool', new Error('timeout exceeded when trying to connect'), [false, false, true]],
    [
      'a connection terminated',
      new Error('Connection terminated unexpectedly'),
      [true, true, true],
    ],
    [
      "TypeORM's released query runner",
      Object.assign(new Error('released'), { name: 'QueryRunnerAlreadyReleasedError' }),
      [false, true, true],
    ],
    ['23505 (a query of its own)', pgError('23505'), [false, false, false]],
  ])('%s', (_name, error, expected) => {
    expect(decisions(error)).toEqual(expected);
  });
});
