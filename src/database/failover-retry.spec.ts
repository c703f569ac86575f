import { jest } from '@jest/globals';
import { QueryFailedError } from 'typeorm';
import { CommitOutcomeUnknownError } from './commit-outcome.js';
import { ConnectionGate } from './connection-gate.js';
import {
  FAILOVER_RETRY_BASE_MS,
  FAILOVER_RETRY_MAX_MS,
  failoverRetryDelay,
  isFailoverError,
  retryOnFailover,
  retryingOnFailover,
} from './failover-retry.js';

const withCode = (code: string, message = `failed with ${code}`) =>
  Object.assign(new Error(message), { code });
const wrapped = (driverError: Error) => new QueryFailedError('COMMIT', [], driverError);
/** What the connection gate answers, without a connection attempt, after `cause` failed one. */
const refusedByGate = (cause: Error) => {
  const gate = new ConnectionGate();
  gate.failed(cause);
  return gate.attempt();
};

describe(isFailoverError.name, () => {
  it.each([
    ['connection refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['connection reset', withCode('ECONNRESET', 'read ECONNRESET')],
    ['a write on a closed socket', withCode('EPIPE')],
    ['a dead peer found by keepalives', withCode('ETIMEDOUT')],
    ['admin shutdown (a fast shutdown, a demotion)', withCode('57P01')],
    ['crash shutdown', withCode('57P02')],
    ['the server is starting, stopping or in recovery', withCode('57P03')],
    ['a read-only node (a demoted primary)', withCode('25006')],
    ['unable to establish a connection', withCode('08001')],
    ['a connection failure', withCode('08006')],
    [
      'the connection gate backing off after a refused connection',
      refusedByGate(withCode('ECONNREFUSED')),
    ],
    [
      'the connection gate backing off after a closed connection (08001)',
      refusedByGate(new Error('Connection terminated unexpectedly')),
    ],
    ['the connection closed under a query', new Error('Connection terminated unexpectedly')],
    ["the pool's connect timeout", new Error('Connection terminated due to connection timeout')],
    [
      'a client that is no longer queryable',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['a commit whose outcome is unknown', new CommitOutcomeUnknownError('the connection broke')],
    ['a driver error inside a QueryFailedError', wrapped(withCode('57P01'))],
    [
      'TypeORM: the connection died under a transaction',
      Object.assign(new Error('Query runner already released'), {
        name: 'QueryRunnerAlreadyReleasedError',
      }),
    ],
  ])('retries %s', (_, error) => {
    expect(isFailoverError(error)).toBe(true);
  });

  it.each([
    ['a statement timeout (57014)', withCode('57014', 'canceling statement due to user request')],
    ['a lock timeout (another request holds the key)', wrapped(withCode('55P03'))],
    ['too many connections (an overload)', withCode('53300')],
    ['a full pool (an overload)', new Error('timeout exceeded when trying to connect')],
    ['a serialization failure', withCode('40001')],
    ['a unique violation', wrapped(withCode('23505'))],
    ['a failed login', withCode('28P01')],
    ['the connection gate backing off after a failed login', refusedByGate(withCode('28P01'))],
    ['an unresolvable host name', withCode('ENOTFOUND')],
    ['a plain error', new Error('boom')],
    ['not an error at all', 'ECONNRESET'],
    ['nothing', undefined],
  ])('does not retry %s', (_, error) => {
    expect(isFailoverError(error)).toBe(false);
  });
});

describe(failoverRetryDelay.name, () => {
  it('starts at the base delay and doubles up to the maximum', () => {
    const ceilings = [0, 1, 2, 3, 4, 5, 40].map((retry) => failoverRetryDelay(retry, () => 1));
    expect(ceilings).toEqual([100, 200, 400, 800, 1000, 1000, 1000]);
    expect([FAILOVER_RETRY_BASE_MS, FAILOVER_RETRY_MAX_MS]).toEqual([100, 1000]);
  });

  it('draws each delay between half and all of its ceiling', () => {
    expect(failoverRetryDelay(0, () => 0)).toBe(50);
    expect(failoverRetryDelay(9, () => 0)).toBe(500);
    for (let retry = 0; retry < 20; retry++) {
      const delay = failoverRetryDelay(retry);
      expect(delay).toBeGreaterThanOrEqual(FAILOVER_RETRY_BASE_MS / 2);
      expect(delay).toBeLessThanOrEqual(FAILOVER_RETRY_MAX_MS);
    }
  });
});

describe(retryOnFailover.name, () => {
  const refused = withCode('ECONNREFUSED');
  let now: number;
  let waits: number[];
  /** A clock that moves only when the retry waits, so each test controls time exactly. */
  const clock = (budgetMs: number, abandoned?: () => boolean) => ({
    budgetMs,
    abandoned,
    now: () => now,
    random: () => 1,
    wait: (ms: number) => {
      waits.push(ms);
      now += ms;
      return Promise.resolve();
    },
  });
  /** Work that fails with each of `failures` in turn, then answers 'done'. */
  const failing = (...failures: Error[]) => {
    const work = jest.fn(() =>
      work.mock.calls.length <= failures.length
        ? Promise.reject(failures[work.mock.calls.length - 1])
        : Promise.resolve('done'),
    );
    return work;
  };

  beforeEach(() => {
    now = 0;
    waits = [];
  });

  it('runs the work again after failover errors, with the backoff between attempts', async () => {
    const work = failing(refused, withCode('57P01'), withCode('25006'));
    await expect(retryOnFailover(work, clock(10_000))).resolves.toBe('done');
    expect(work).toHaveBeenCalledTimes(4);
    expect(waits).toEqual([100, 200, 400]);
  });

  it('answers at once, without retrying, when the work succeeds or fails otherwise', async () => {
    const conflict = wrapped(withCode('23505'));
    const work = failing(conflict);
    await expect(retryOnFailover(work, clock(10_000))).rejects.toBe(conflict);
    expect(work).toHaveBeenCalledTimes(1);
    expect(waits).toEqual([]);
  });

  it('never retries when disabled (a budget of 0)', async () => {
    const work = failing(refused);
    await expect(retryOnFailover(work, clock(0))).rejects.toBe(refused);
    expect(work).toHaveBeenCalledTimes(1);
    expect(waits).toEqual([]);
  });

  it('starts no attempt past the budget, and throws the last failure as it was', async () => {
    const last = withCode('57P03');
    const work = failing(...Array.from({ length: 20 }, () => refused), last);
    await expect(retryOnFailover(work, clock(2000))).rejects.toBe(refused);
    // 100 + 200 + 400 + 800 = 1500 ms, then the wait is cut to the 500 ms left: the last attempt
    // starts at the budget's end, and no wait goes beyond it.
    expect(waits).toEqual([100, 200, 400, 800, 500]);
    expect(now).toBe(2000);
    expect(work).toHaveBeenCalledTimes(6);
  });

  it('keeps each wait within the backoff bound, however long the budget', async () => {
    const work = failing(...Array.from({ length: 30 }, () => refused));
    await expect(retryOnFailover(work, clock(60_000))).resolves.toBe('done');
    expect(Math.max(...waits)).toBe(FAILOVER_RETRY_MAX_MS);
    expect(waits.every((ms) => ms >= FAILOVER_RETRY_BASE_MS)).toBe(true);
  });

  it('stops once the caller is gone, before a retry or after its wait', async () => {
    const goneAtOnce = failing(refused);
    await expect(
      retryOnFailover(
        goneAtOnce,
        clock(10_000, () => true),
      ),
    ).rejects.toBe(refused);
    expect(goneAtOnce).toHaveBeenCalledTimes(1);
    expect(waits).toEqual([]);

    let gone = false;
    const goneDuringWait = failing(refused, refused);
    const options = clock(10_000, () => gone);
    const wait = options.wait;
    options.wait = (ms) => {
      gone = true;
      return wait(ms);
    };
    await expect(retryOnFailover(goneDuringWait, options)).rejects.toBe(refused);
    expect(goneDuringWait).toHaveBeenCalledTimes(1);
  });
});

describe(retryingOnFailover.name, () => {
  it('reruns the whole transaction through the scope after a failover error', async () => {
    const outcomes = [new CommitOutcomeUnknownError('the connection broke'), 'stored'];
    const scope = {
      run: jest.fn(() => {
        const next = outcomes.shift();
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
      }),
    };
    const work = () => Promise.resolve('unused: the scope is a stand-in');
    const retrying = retryingOnFailover(scope as never, { budgetMs: 10_000, wait: async () => {} });
    await expect(retrying.run(work)).resolves.toBe('stored');
    expect(scope.run).toHaveBeenCalledTimes(2);
    expect(scope.run).toHaveBeenNthCalledWith(2, work);
  });

  it("waits between attempts through the primary pool's connection gate", async () => {
    const gate = new ConnectionGate();
    const waitToRetry = jest.spyOn(gate, 'waitToRetry');
    const outcomes = [withCode('ECONNREFUSED'), 'stored'];
    const scope = {
      connectionGate: gate,
      run: jest.fn(() => {
        const next = outcomes.shift();
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
      }),
    };
    const retrying = retryingOnFailover(scope as never, { budgetMs: 60_000, random: () => 1 });
    await expect(retrying.run(() => Promise.resolve('unused'))).resolves.toBe('stored');
    // The first back-off, which the gate ends early on a reconnect (ConnectionGate's own tests).
    expect(waitToRetry).toHaveBeenCalledWith(100);
  });
});
