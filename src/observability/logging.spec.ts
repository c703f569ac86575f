import { jest } from '@jest/globals';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { capturingLogger } from '../../test/support/capturing-logger.js';
import { pino } from 'pino';
import { isoTimeOncePerMs, logProcessFailures } from './logging.js';

describe(logProcessFailures.name, () => {
  it('logs what nothing caught in the log schema, without its data, then exits 1', () => {
    const captured = capturingLogger();
    const exit = jest.fn<(code: number) => void>();
    const target = Object.assign(new EventEmitter(), { exit });
    logProcessFailures(captured.logger, target);
    const driverError = Object.assign(new pg.DatabaseError('duplicate key value', 0, 'error'), {
      severity: 'ERROR',
      code: '23505',
      detail: 'Key (lower(email))=(ada.private@example.com) already exists.',
      constraint: 'users_email_lower_key',
    });
    target.emit('uncaughtException', driverError);
    target.emit('unhandledRejection', new Error('nobody waited for this'));
    expect(exit.mock.calls).toEqual([[1], [1]]);
    expect(captured.lines()).toEqual([
      expect.objectContaining({
        level: 'fatal',
        context: 'Process',
        msg: 'uncaught exception',
        err: expect.objectContaining({ code: '23505', constraint: 'users_email_lower_key' }),
      }),
      expect.objectContaining({
        level: 'fatal',
        msg: 'unhandled promise rejection',
        err: expect.objectContaining({ message: 'nobody waited for this' }),
      }),
    ]);
    expect(captured.raw()).not.toContain('ada.private');
  });
});

describe(isoTimeOncePerMs.name, () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it("writes pino's isoTime field, formatted again only when the millisecond changes", () => {
    jest.useFakeTimers({ now: Date.parse('2026-11-27T14:03:07.250Z') });
    const time = isoTimeOncePerMs();
    expect(time()).toBe(pino.stdTimeFunctions.isoTime());
    expect(time()).toBe(',"time":"2026-11-27T14:03:07.250Z"');
    const toISOString = jest.spyOn(Date.prototype, 'toISOString');
    expect(time()).toBe(',"time":"2026-11-27T14:03:07.250Z"');
    expect(toISOString).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(time()).toBe(',"time":"2026-11-27T14:03:07.251Z"');
    expect(toISOString).toHaveBeenCalledTimes(1);
    toISOString.mockRestore();
  });
});
