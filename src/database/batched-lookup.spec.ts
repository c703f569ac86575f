import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  type SpanContext,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BatchedLookup, callsServed } from './batched-lookup.js';

interface Row {
  id: number;
  name: string;
}

/** A lookup over `table` that records the keys of each statement. */
function recordingLookup(table: Row[], failWith?: Error, how: 'rejects' | 'throws' = 'rejects') {
  const statements: number[][] = [];
  const lookup = new BatchedLookup<number, Row>(
    (ids) => {
      statements.push(ids);
      if (failWith && how === 'throws') throw failWith;
      if (failWith) return Promise.reject(failWith);
      // In any order, as a database returns them.
      return Promise.resolve(table.filter((row) => ids.includes(row.id)).reverse());
    },
    (row) => row.id,
    3,
  );
  return { lookup, statements };
}

const table = [1, 2, 3, 4, 5].map((id) => ({ id, name: `user ${id}` }));

describe(BatchedLookup.name, () => {
  it('answers the lookups of one turn with one statement, each with its own row', async () => {
    const { lookup, statements } = recordingLookup(table);
    const answers = await Promise.all([lookup.find(2), lookup.find(1), lookup.find(9)]);
    expect(answers).toEqual([table[1], table[0], undefined]);
    expect(statements).toEqual([[2, 1, 9]]);
  });

  it('asks for a key once however many lookups want it', async () => {
    const { lookup, statements } = recordingLookup(table);
    const answers = await Promise.all([lookup.find(4), lookup.find(4), lookup.find(5)]);
    expect(answers).toEqual([table[3], table[3], table[4]]);
    expect(statements).toEqual([[4, 5]]);
  });

  it('splits a batch larger than its bound into several statements', async () => {
    const { lookup, statements } = recordingLookup(table);
    const answers = await Promise.all([1, 2, 3, 4, 5].map((id) => lookup.find(id)));
    expect(answers).toEqual(table);
    expect(statements).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('sends a lookup of a later turn in a statement of its own', async () => {
    const { lookup, statements } = recordingLookup(table);
    const first = lookup.find(1);
    await nextTurn();
    const second = lookup.find(2);
    expect(await Promise.all([first, second])).toEqual([table[0], table[1]]);
    expect(statements).toEqual([[1], [2]]);
  });

  it.each(['rejects', 'throws'] as const)(
    'fails every lookup of a failed statement with its error (the lookup %s)',
    async (how) => {
      const unavailable = new Error('the database is unreachable');
      const { lookup } = recordingLookup(table, unavailable, how);
      const outcomes = await Promise.allSettled([lookup.find(1), lookup.find(2)]);
      expect(outcomes).toEqual([
        { status: 'rejected', reason: unavailable },
        { status: 'rejected', reason: unavailable },
      ]);
    },
  );

  it.each([
    {
      answer: 'whose rows have no key (keyOf throws)',
      rows: () => Promise.resolve(table),
      keyOf: (): number => {
        throw new Error('a row without an id');
      },
    },
    {
      answer: 'that is no list of rows',
      rows: () => Promise.resolve(undefined as unknown as Row[]),
      keyOf: (row: Row) => row.id,
    },
  ])('fails every lookup of a statement $answer', async ({ rows, keyOf }) => {
    const lookup = new BatchedLookup<number, Row>(rows, keyOf);
    const outcomes = await Promise.allSettled([lookup.find(1), lookup.find(2), lookup.find(2)]);
    expect(outcomes).toEqual([
      { status: 'rejected', reason: expect.any(Error) },
      { status: 'rejected', reason: expect.any(Error) },
      { status: 'rejected', reason: expect.any(Error) },
    ]);
  });

  describe('with tracing', () => {
    // Registers the context manager the service runs with (AsyncLocalStorage).
    beforeEach(() => new NodeTracerProvider().register());
    afterEach(() => {
      trace.disable();
      context.disable();
      propagation.disable();
    });

    const spanOfCall = (): SpanContext => ({
      traceId: randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
      traceFlags: TraceFlags.SAMPLED,
    });

    it("hands each statement links to the spans of the calls it serves, in the first call's context", async () => {
      const calls = [spanOfCall(), spanOfCall(), spanOfCall(), spanOfCall()];
      const seen: { keys: number[]; parent?: SpanContext; links?: unknown }[] = [];
      const lookup = new BatchedLookup<number, Row>(
        (keys) => {
          const active = context.active();
          seen.push({ keys, parent: trace.getSpanContext(active), links: callsServed(active) });
          return Promise.resolve(table.filter((row) => keys.includes(row.id)));
        },
        (row) => row.id,
        2,
      );
      const inCall = (call: SpanContext, key: number) =>
        context.with(trace.setSpanContext(ROOT_CONTEXT, call), () => lookup.find(key));
      await Promise.all([
        inCall(calls[0], 1),
        inCall(calls[1], 2),
        inCall(calls[2], 2),
        inCall(calls[3], 3),
        lookup.find(4),
      ]);
      expect(seen).toEqual([
        {
          keys: [1, 2],
          parent: calls[0],
          links: [{ context: calls[0] }, { context: calls[1] }, { context: calls[2] }],
        },
        { keys: [3, 4], parent: calls[0], links: [{ context: calls[3] }] },
      ]);
    });
  });
});
