import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable } from './database-errors.js';

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
