import { describe, expect, it } from '@jest/globals';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BatchedLookup } from './batched-lookup.js';

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
});
