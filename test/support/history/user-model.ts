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
      if (output === undefined) return next;
      return sameOutput(output, expected) ? next : undefined;
    },
  };
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
