// The sequential specification of one user record, as the API promises it (docs/api.md): a read
// by id, a PATCH without If-Match (always applies), a PATCH with If-Match (applies only to the
// version it names, else 412), and a DELETE; every change adds 1 to the version, a deleted user
// answers 404 to everything. The failover tests hold per-user histories against it.
import type { Model, Operation } from './linearizability.js';

export type UserInput =
  | { f: 'read' }
  | { f: 'write'; name: string }
  | { f: 'cas'; version: number; name: string }
  | { f: 'delete' };

export type UserOutput =
  | { status: 200; name: string; version: number }
  | { status: 204 }
  | { status: 404 }
  | { status: 412 };

export type UserState = { name: string; version: number } | 'deleted';

export type UserOperation = Operation<UserInput, UserOutput>;

/** The model of a user that exists with `name` at `version` when the history starts. */
export function userModel(name: string, version = 1): Model<UserState, UserInput, UserOutput> {
  return {
    initial: { name, version },
    key: (state) => (state === 'deleted' ? 'deleted' : `${state.version}:${state.name}`),
    step(state, input, output) {
      const [next, expected] = apply(state, input);
      // An operation of unknown outcome that would change nothing here (a 412, a 404) is the
      // same as one that never took effect: only the latter is tried.
      if (output === undefined) return next !== state ? next : undefined;
      return sameOutput(output, expected) ? next : undefined;
    },
  };
}

/**
 * The symmetry of a user's history (checkLinearizable's `after`): writes of unknown outcome
 * whose names no answer ever showed are interchangeable (each, if it took effect, only added 1 to
 * the version before being overwritten), so whichever of them took effect may as well be the
 * earliest called. Such PATCHes without If-Match form one chain, those with If-Match one chain
 * per version they name; each operation waits for the one called before it in its chain.
 */
export function unobservedWriteChains(history: readonly UserOperation[]): Map<number, number> {
  const observed = new Set(
    history.flatMap((op) => (op.output?.status === 200 ? [op.output.name] : [])),
  );
  const chains = new Map<string, number[]>();
  history.forEach((op, index) => {
    if (op.output !== undefined || op.input.f === 'read' || op.input.f === 'delete') return;
    if (observed.has(op.input.name)) return;
    const chain = op.input.f === 'write' ? 'write' : `cas:${op.input.version}`;
    chains.set(chain, [...(chains.get(chain) ?? []), index]);
  });
  const after = new Map<number, number>();
  for (const chain of chains.values()) {
    chain.sort((a, b) => history[a].callAt - history[b].callAt);
    chain.forEach((index, position) => {
      if (position > 0) after.set(index, chain[position - 1]);
    });
  }
  return after;
}

function apply(state: UserState, input: UserInput): [UserState, UserOutput] {
  if (state === 'deleted') return [state, { status: 404 }];
  switch (input.f) {
    case 'read':
      return [state, { status: 200, ...state }];
    case 'write': {
      const next = { name: input.name, version: state.version + 1 };
      return [next, { status: 200, ...next }];
    }
    case 'cas': {
      if (input.version !== state.version) return [state, { status: 412 }];
      const next = { name: input.name, version: state.version + 1 };
      return [next, { status: 200, ...next }];
    }
    case 'delete':
      return ['deleted', { status: 204 }];
  }
}

function sameOutput(observed: UserOutput, expected: UserOutput): boolean {
  if (observed.status !== expected.status) return false;
  if (observed.status !== 200 || expected.status !== 200) return true;
  return observed.name === expected.name && observed.version === expected.version;
}
