import { QueryFailedError } from 'typeorm';
import { isConnectionLost, isDatabaseUnavailable } from './database-errors.js';

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
