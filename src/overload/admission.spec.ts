import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { OverloadSettings } from '../config/app-config.js';
import { AdmissionController, type AdmissionRequest } from './admission.js';
import type { RejectReason, WorkClass } from './work-class.js';

const FIXED: OverloadSettings = {
  mode: 'fixed',
  min: 1,
  max: 10,
  initial: 10,
  queueTimeoutMs: 100,
  retryAfterS: 1,
  maxConnections: 100,
};

/** A request as a transport would offer it, recording what admission did with it. */
class Probe implements AdmissionRequest {
  outcome?: 'admitted' | RejectReason;
  done?: () => void;
  left = false;

  constructor(
    readonly workClass: WorkClass,
    readonly deadline = Infinity,
  ) {}

  gone(): boolean {
    return this.left;
  }

  admit(done: () => void): void {
    this.outcome = 'admitted';
    this.done = done;
  }

  reject(reason: RejectReason): void {
    this.outcome = reason;
  }
}

function offer(admission: AdmissionController, workClass: WorkClass, count = 1): Probe[] {
  return Array.from({ length: count }, () => {
    const probe = new Probe(workClass);
    admission.offer(probe);
    return probe;
  });
}

const outcomes = (probes: Probe[]) => probes.map((probe) => probe.outcome);

describe(AdmissionController.name, () => {
  let admission: AdmissionController;

  beforeEach(() => {
    jest.useFakeTimers();
    admission = new AdmissionController(FIXED);
  });

  afterEach(() => {
    admission.close();
    jest.useRealTimers();
  });

  it('admits while fewer than the limit are in flight, then queues, then rejects', () => {
    const running = offer(admission, 'write', 10);
    expect(outcomes(running)).toEqual(Array(10).fill('admitted'));
    const waiting = offer(admission, 'write', 10);
    expect(outcomes(waiting)).toEqual(Array(10).fill(undefined));
    expect(outcomes(offer(admission, 'write'))).toEqual(['limit']);
    expect(admission.stats).toEqual({ limit: 10, inFlight: 10, feedInFlight: 0, queued: 10 });
  });

  it('gives a free slot to the oldest waiter while the queue drains, and rejects waits past the bound', () => {
    const running = offer(admission, 'write', 10);
    const [first, second] = offer(admission, 'write', 2);
    running[0].done!();
    expect([first.outcome, second.outcome]).toEqual(['admitted', undefined]);
    jest.advanceTimersByTime(FIXED.queueTimeoutMs + 10);
    expect(second.outcome).toBe('queue_timeout');
    expect(admission.stats.queued).toBe(0);
  });

  it('sheds in class order: the feed, then lists, then reads, then writes', () => {
    // Limit 10: the feed may start below 5 in flight, lists below 7, reads below 9, writes below 10.
    offer(admission, 'write', 5);
    expect(outcomes(offer(admission, 'feed'))).toEqual(['limit']);
    offer(admission, 'write', 2);
    const list = offer(admission, 'list');
    expect(outcomes(list)).toEqual([undefined]);
    const reads = offer(admission, 'read', 3);
    expect(outcomes(reads)).toEqual(['admitted', 'admitted', undefined]);
    const write = offer(admission, 'write');
    expect(outcomes(write)).toEqual(['admitted']);
    jest.advanceTimersByTime(FIXED.queueTimeoutMs + 10);
    expect(outcomes([...list, reads[2]])).toEqual(['queue_timeout', 'queue_timeout']);
  });

  it('hands free slots to waiting writes before waiting reads and lists', () => {
    const running = offer(admission, 'write', 10);
    const list = offer(admission, 'list');
    const read = offer(admission, 'read');
    const write = offer(admission, 'write');
    running[0].done!();
    expect(outcomes([...list, ...read, ...write])).toEqual([undefined, undefined, 'admitted']);
  });

  it('never starts a waiter whose caller left or whose deadline passed', () => {
    const running = offer(admission, 'write', 10);
    const [left] = offer(admission, 'read');
    const late = new Probe('read', performance.now() + 20);
    admission.offer(late);
    left.left = true;
    jest.advanceTimersByTime(30);
    expect([left.outcome, late.outcome]).toEqual(['client_gone', 'deadline']);
    running[0].done!();
    expect(admission.stats).toEqual({ limit: 10, inFlight: 9, feedInFlight: 0, queued: 0 });
  });

  it('rejects a request whose deadline has already passed without queueing it', () => {
    const late = new Probe('write', performance.now() - 1);
    admission.offer(late);
    expect(late.outcome).toBe('deadline');
  });

  it('holds long polls apart from the limit and caps them at half of it', () => {
    const polls = offer(admission, 'feed', 6);
    expect(outcomes(polls)).toEqual([...Array(5).fill('admitted'), 'limit']);
    expect(admission.stats).toEqual({ limit: 10, inFlight: 0, feedInFlight: 5, queued: 0 });
    polls[0].done!();
    polls[0].done!();
    expect(admission.stats.feedInFlight).toBe(4);
  });

  it('waits a tenth of the bound once a queue stands, and serves the newest waiter first', () => {
    const running = offer(admission, 'write', 10);
    offer(admission, 'write');
    // The queue has not been empty for longer than its bound: it stands.
    for (let step = 0; step < 5; step++) {
      jest.advanceTimersByTime(30);
      offer(admission, 'write');
    }
    const [older, newer] = offer(admission, 'write', 2);
    running[0].done!();
    expect([older.outcome, newer.outcome]).toEqual([undefined, 'admitted']);
    jest.advanceTimersByTime(FIXED.queueTimeoutMs / 10 + 5);
    expect(older.outcome).toBe('queue_timeout');
  });
});
