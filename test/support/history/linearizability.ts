// A linearizability checker for the histories the failover tests record: Wing and Gong's search
// with Lowe's memoisation (the algorithm of Knossos and porcupine). A history is linearizable when
// every operation can be given one instant between its call and its return, such that the
// operations, applied one at a time in that order, give exactly the outputs that were observed.
//
// An operation whose outcome the client never learned (a 5xx, a timeout, a broken connection) is
// indeterminate: it may have taken effect at any instant after its call, or never; its output
// constrains nothing. A read that failed that way says nothing and is best left out.

/** One call of the history: its input, when it was called and returned, and what came back. */
export interface Operation<I, O> {
  /** Who called it (a worker, a client): only for the report. */
  client: string;
  input: I;
  /** Undefined when the outcome is unknown (the operation is indeterminate). */
  output?: O;
  /** When the call was made and when its answer came (any monotonic clock, one for all). */
  callAt: number;
  /** Ignored for an indeterminate operation. */
  returnAt: number;
}

/** The sequential specification the history is held against. */
export interface Model<S, I, O> {
  initial: S;
  /**
   * The state after `input` is applied to `state`, or undefined when it cannot produce `output`
   * there. `output` undefined (an indeterminate operation): the state after it took effect.
   */
  step(state: S, input: I, output: O | undefined): S | undefined;
  /** A string equal for equal states (memoisation). */
  key(state: S): string;
}

export interface Verdict {
  linearizable: boolean;
  /** Operations in the history, and how many were indeterminate. */
  operations: number;
  indeterminate: number;
  /** Search steps taken (for the report). */
  steps: number;
  /**
   * When not linearizable: the longest prefix order found, as operation indexes, and the index of
   * the first completed operation no order could place after it.
   */
  longestOrder?: number[];
  stuckAt?: number;
}

interface Entry {
  op: number;
  isCall: boolean;
  time: number;
  /** The other entry of the same operation (the call's return; none for indeterminate calls). */
  match?: Entry;
  prev?: Entry;
  next?: Entry;
}

/** At most this many search steps: a history that needs more is reported, not searched forever. */
export const MAX_STEPS = 5_000_000;

/**
 * Whether `history` is linearizable with respect to `model`. Throws when the search needs more
 * than MAX_STEPS steps (split the history, e.g. one per key, which this checker expects).
 *
 * `after` (optional) maps an operation to one that must take effect before it may: a symmetry
 * the model knows. Indeterminate operations whose effects are interchangeable (writes whose
 * values nobody observed) are then tried in one order only, instead of every subset of them.
 */
export function checkLinearizable<S, I, O>(
  model: Model<S, I, O>,
  history: readonly Operation<I, O>[],
  after: ReadonlyMap<number, number> = new Map(),
): Verdict {
  const indeterminate = history.filter((op) => op.output === undefined).length;
  const head = entries(history);
  const linearized = new Uint8Array(history.length);
  const seen = new Set<string>();
  const stack: { entry: Entry; state: S }[] = [];
  let state = model.initial;
  let entry = head.next;
  let steps = 0;
  let longestOrder: number[] = [];
  let stuckAt: number | undefined;

  while (head.next) {
    if (++steps > MAX_STEPS) {
      throw new Error(`linearizability search gave up after ${MAX_STEPS} steps`);
    }
    if (!entry) {
      // Only calls of indeterminate operations are left: none of them has to take effect.
      break;
    }
    if (entry.isCall) {
      const op = history[entry.op];
      const first = after.get(entry.op);
      const next =
        first === undefined || linearized[first]
          ? model.step(state, op.input, op.output)
          : undefined;
      if (next !== undefined) {
        linearized[entry.op] = 1;
        const key = `${model.key(next)}|${Buffer.from(linearized).toString('base64')}`;
        if (!seen.has(key)) {
          seen.add(key);
          stack.push({ entry, state });
          state = next;
          lift(entry);
          entry = head.next;
          continue;
        }
        linearized[entry.op] = 0;
      }
      entry = entry.next;
      continue;
    }
    // A return: its operation cannot be placed in this order; undo the last choice.
    if (stack.length >= longestOrder.length) {
      longestOrder = stack.map((choice) => choice.entry.op);
      stuckAt = entry.op;
    }
    const last = stack.pop();
    if (!last)
      return {
        linearizable: false,
        operations: history.length,
        indeterminate,
        steps,
        longestOrder,
        stuckAt,
      };
    state = last.state;
    linearized[last.entry.op] = 0;
    unlift(last.entry);
    entry = last.entry.next;
  }
  return { linearizable: true, operations: history.length, indeterminate, steps };
}

/** The doubly linked list of call and return entries, by time; calls first at equal times. */
function entries<I, O>(history: readonly Operation<I, O>[]): Entry {
  const list: Entry[] = [];
  history.forEach((op, index) => {
    const call: Entry = { op: index, isCall: true, time: op.callAt };
    list.push(call);
    if (op.output !== undefined) {
      const ret: Entry = { op: index, isCall: false, time: op.returnAt, match: call };
      call.match = ret;
      list.push(ret);
    }
  });
  // At equal times a call sorts first: the two operations count as concurrent.
  list.sort((a, b) => a.time - b.time || Number(b.isCall) - Number(a.isCall));
  const head: Entry = { op: -1, isCall: false, time: -Infinity };
  let previous = head;
  for (const entry of list) {
    previous.next = entry;
    entry.prev = previous;
    previous = entry;
  }
  return head;
}

/** Takes an operation's call (and return, if any) out of the list. */
function lift(call: Entry): void {
  call.prev!.next = call.next;
  if (call.next) call.next.prev = call.prev;
  const ret = call.match;
  if (ret) {
    ret.prev!.next = ret.next;
    if (ret.next) ret.next.prev = ret.prev;
  }
}

/** Puts them back, in the reverse order. */
function unlift(call: Entry): void {
  const ret = call.match;
  if (ret) {
    ret.prev!.next = ret;
    if (ret.next) ret.next.prev = ret;
  }
  call.prev!.next = call;
  if (call.next) call.next.prev = call;
}
