import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { LateRejections } from './late-rejections.js';

describe(LateRejections.name, () => {
  let late: LateRejections;
  const sent: string[] = [];
  const answer = (what: string) => () => sent.push(what);

  beforeEach(() => {
    jest.useFakeTimers();
    sent.length = 0;
    late = new LateRejections(1000, 2);
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('answers a first rejection at once', () => {
    late.answer('a', answer('a1'));
    late.answer('b', answer('b1'));
    expect(sent).toEqual(['a1', 'b1']);
  });

  it('answers a caller that asks again at once only when its Retry-After has passed', () => {
    late.answer('a', answer('a1'));
    jest.advanceTimersByTime(10);
    late.answer('a', answer('a2'));
    expect(sent).toEqual(['a1']);
    jest.advanceTimersByTime(950);
    expect(sent).toEqual(['a1']);
    jest.advanceTimersByTime(60);
    expect(sent).toEqual(['a1', 'a2']);
  });

  it('answers at once while as many answers as it may hold are held', () => {
    for (const caller of ['a', 'b', 'c']) late.answer(caller, answer(`${caller}1`));
    for (const caller of ['a', 'b', 'c']) late.answer(caller, answer(`${caller}2`));
    expect(sent).toEqual(['a1', 'b1', 'c1', 'c2']);
    jest.advanceTimersByTime(1020);
    expect(sent).toEqual(['a1', 'b1', 'c1', 'c2', 'a2', 'b2']);
  });

  it('answers at once a caller that waited before asking again', () => {
    late.answer('a', answer('a1'));
    jest.advanceTimersByTime(500);
    late.answer('a', answer('a2'));
    expect(sent).toEqual(['a1', 'a2']);
  });
});
