import { checkLinearizable } from './linearizability.js';
import {
  unobservedWriteChains,
  userModel,
  type UserInput,
  type UserOperation,
  type UserOutput,
} from './user-model.js';

/** Every history below is about a user created as Ada at version 1. */
const model = userModel('Ada');

const op = (
  client: string,
  input: UserInput,
  output: UserOutput | undefined,
  callAt: number,
  returnAt = Infinity,
): UserOperation => ({ client, input, output, callAt, returnAt });

const read = (output: UserOutput, callAt: number, returnAt: number, client = 'r') =>
  op(client, { f: 'read' }, output, callAt, returnAt);
const user = (name: string, version: number): UserOutput => ({ status: 200, name, version });

const linearizable = (history: UserOperation[]) => checkLinearizable(model, history).linearizable;

describe(checkLinearizable.name, () => {
  describe('passes valid histories', () => {
    it('a sequential one', () => {
      expect(
        linearizable([
          read(user('Ada', 1), 0, 1),
          op('w', { f: 'write', name: 'Bob' }, user('Bob', 2), 2, 3),
          read(user('Bob', 2), 4, 5),
          op('w', { f: 'cas', version: 2, name: 'Cyd' }, user('Cyd', 3), 6, 7),
          op('w', { f: 'delete' }, { status: 204 }, 8, 9),
          read({ status: 404 }, 10, 11),
        ]),
      ).toBe(true);
    });

    it('a read overlapping a write, whichever value it saw', () => {
      const write = op('w', { f: 'write', name: 'Bob' }, user('Bob', 2), 0, 10);
      expect(linearizable([write, read(user('Ada', 1), 2, 8)])).toBe(true);
      expect(linearizable([write, read(user('Bob', 2), 2, 8)])).toBe(true);
    });

    it('two concurrent conditional writes from one version: one wins, the other gets 412', () => {
      expect(
        linearizable([
          op('a', { f: 'cas', version: 1, name: 'Bob' }, { status: 412 }, 0, 10),
          op('b', { f: 'cas', version: 1, name: 'Cyd' }, user('Cyd', 2), 1, 9),
          read(user('Cyd', 2), 11, 12),
        ]),
      ).toBe(true);
    });

    it('an indeterminate write, whether it took effect or not', () => {
      const lost = op('w', { f: 'write', name: 'Bob' }, undefined, 0);
      expect(linearizable([lost, read(user('Ada', 1), 5, 6), read(user('Ada', 1), 50, 51)])).toBe(
        true,
      );
      // It took effect after its call, even long after (a commit that waited for the standby).
      expect(linearizable([lost, read(user('Ada', 1), 5, 6), read(user('Bob', 2), 50, 51)])).toBe(
        true,
      );
    });

    it('many writes of unknown outcome, trying interchangeable ones in one order only', () => {
      // 40 PATCHes nobody saw the outcome of, then one that did: 20 of the 40 took effect.
      const unknown = Array.from({ length: 40 }, (_, i) =>
        op(`c${i}`, { f: 'write', name: `u${i}` }, undefined, i),
      );
      const history = [...unknown, op('w', { f: 'write', name: 'Zed' }, user('Zed', 22), 100, 101)];
      const verdict = checkLinearizable(model, history, unobservedWriteChains(history));
      expect(verdict.linearizable).toBe(true);
      expect(verdict.steps).toBeLessThan(10_000);
      // More versions than writes called: no order explains it.
      history[40] = op('w', { f: 'write', name: 'Zed' }, user('Zed', 50), 100, 101);
      expect(checkLinearizable(model, history, unobservedWriteChains(history)).linearizable).toBe(
        false,
      );
    });

    it('a concurrent history of many clients, timed around a real order', () => {
      const history = simulate(400, 7);
      const verdict = checkLinearizable(model, history);
      expect(verdict).toMatchObject({ linearizable: true, operations: 400 });
      expect(verdict.indeterminate).toBeGreaterThan(0);
    });
  });

  describe('fails each kind of violation', () => {
    it('a stale read: an acknowledged write, then a read of the value before it', () => {
      expect(
        linearizable([
          op('w', { f: 'write', name: 'Bob' }, user('Bob', 2), 0, 10),
          read(user('Ada', 1), 20, 30),
        ]),
      ).toBe(false);
    });

    it('a lost acknowledged write: a later write builds on the version before it', () => {
      expect(
        linearizable([
          op('w', { f: 'write', name: 'Bob' }, user('Bob', 2), 0, 10),
          op('w', { f: 'write', name: 'Cyd' }, user('Cyd', 2), 20, 30),
        ]),
      ).toBe(false);
    });

    it('two successful conditional writes from one version', () => {
      expect(
        linearizable([
          op('a', { f: 'cas', version: 1, name: 'Bob' }, user('Bob', 2), 0, 10),
          op('b', { f: 'cas', version: 1, name: 'Cyd' }, user('Cyd', 2), 1, 9),
        ]),
      ).toBe(false);
    });

    it('a read of a value never written', () => {
      expect(linearizable([read(user('Zed', 2), 0, 1)])).toBe(false);
      expect(linearizable([read(user('Ada', 2), 0, 1)])).toBe(false);
    });

    it('a write seen by readers, then taken back (a failover that lost a cut-short commit)', () => {
      expect(
        linearizable([
          op('w', { f: 'write', name: 'Bob' }, undefined, 0),
          read(user('Bob', 2), 5, 6),
          read(user('Ada', 1), 50, 51),
        ]),
      ).toBe(false);
    });

    it('a read of a deleted user that answers', () => {
      expect(
        linearizable([op('w', { f: 'delete' }, { status: 204 }, 0, 1), read(user('Ada', 1), 2, 3)]),
      ).toBe(false);
    });

    it('the same history as the valid concurrent one with one read made stale', () => {
      const history = simulate(400, 7);
      const versionOf = (o: UserOperation) =>
        o.output?.status === 200 ? o.output.version : undefined;
      // A read whose version was written by a write that had returned before the read was called.
      const at = history.findLastIndex(
        (r) =>
          r.input.f === 'read' &&
          history.some(
            (w) => w.input.f !== 'read' && versionOf(w) === versionOf(r) && w.returnAt < r.callAt,
          ),
      );
      const before = history.find(
        (o) => versionOf(o) !== undefined && versionOf(o) === versionOf(history[at])! - 1,
      );
      expect(before).toBeDefined();
      history[at] = { ...history[at], output: before!.output };
      expect(linearizable(history)).toBe(false);
    });
  });
});

/**
 * A history of `count` operations by `clients` clients, made from a real sequential order: each
 * operation takes effect at its own instant, its call is a little before and its return a little
 * after (so neighbours overlap), and one write in twenty is left indeterminate.
 */
function simulate(count: number, clients: number): UserOperation[] {
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  let state = { name: 'Ada', version: 1 };
  const history: UserOperation[] = [];
  for (let i = 0; i < count; i++) {
    const at = i * 10;
    const client = `c${i % clients}`;
    const callAt = at - random() * 25;
    const returnAt = at + random() * 25;
    const kind = random();
    if (kind < 0.5) {
      history.push(read(user(state.name, state.version), callAt, returnAt, client));
    } else if (kind < 0.75) {
      state = { name: `n${i}`, version: state.version + 1 };
      const unknown = i % 20 === 0;
      history.push(
        op(
          client,
          { f: 'write', name: state.name },
          unknown ? undefined : user(state.name, state.version),
          callAt,
          returnAt,
        ),
      );
    } else {
      const version = random() < 0.5 ? state.version : state.version - 1;
      if (version === state.version) {
        state = { name: `n${i}`, version: state.version + 1 };
        history.push(
          op(
            client,
            { f: 'cas', version, name: state.name },
            user(state.name, state.version),
            callAt,
            returnAt,
          ),
        );
      } else {
        history.push(
          op(client, { f: 'cas', version, name: `x${i}` }, { status: 412 }, callAt, returnAt),
        );
      }
    }
  }
  return history;
}
