// What the failover test checks after each injected failure, beyond recovery: no acknowledged
// create lost or duplicated (test/topology/keyed-load.ts), and every user's history linearizable
// (test/topology/history-load.ts, test/support/history/).
import pg from 'pg';
import { checkLinearizable, type Verdict } from '../support/history/linearizability.js';
import {
  unobservedWriteChains,
  userModel,
  type UserOperation,
} from '../support/history/user-model.js';
import type { Create } from './keyed-load.js';

export interface CreatesVerdict {
  /** Keys acknowledged (201) whose user is not on the new primary with the id the 201 gave. */
  lost: string[];
  /** Keys with more than one user. */
  duplicates: [string, number[]][];
}

/** Every acknowledged create against the new primary, read straight from it. */
export async function checkCreates(url: string, creates: Create[]): Promise<CreatesVerdict> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  let rows: { id: number; name: string }[];
  try {
    ({ rows } = await db.query<{ id: number; name: string }>(
      'SELECT id, name FROM users WHERE name = ANY($1)',
      [creates.map((c) => c.key)],
    ));
  } finally {
    await db.end();
  }
  const byKey = new Map<string, number[]>();
  for (const row of rows) byKey.set(row.name, [...(byKey.get(row.name) ?? []), Number(row.id)]);
  return {
    lost: creates
      .filter((c) => c.id !== undefined && !byKey.get(c.key)?.includes(Number(c.id)))
      .map((c) => c.key),
    duplicates: [...byKey.entries()].filter(([, ids]) => ids.length > 1),
  };
}

/** The users above `id` on the primary at `url`, read straight from it: id → version. */
export async function usersAbove(url: string, id: number): Promise<Record<number, number>> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ id: number; version: number }>(
      'SELECT id, version FROM users WHERE id > $1',
      [id],
    );
    return Object.fromEntries(rows.map((row) => [row.id, row.version]));
  } finally {
    await db.end();
  }
}

export interface HistoryVerdict extends Verdict {
  user: number;
}

/** Each user's history against the model of a user created with `name` (version 1). */
export function checkHistories(
  users: { id: number; name: string }[],
  histories: Map<number, UserOperation[]>,
): HistoryVerdict[] {
  return users.map(({ id, name }) => {
    const history = histories.get(id) ?? [];
    return {
      user: id,
      ...checkLinearizable(userModel(name), history, unobservedWriteChains(history)),
    };
  });
}

/** A failing history, for the test's output: the operations of the user, in call order. */
export function describeHistory(history: UserOperation[], origin: number): string {
  return [...history]
    .sort((a, b) => a.callAt - b.callAt)
    .map(
      (op) =>
        `  ${op.client} ${(op.callAt - origin).toFixed(0)}..${Number.isFinite(op.returnAt) ? (op.returnAt - origin).toFixed(0) : '?'} ms ` +
        `${JSON.stringify(op.input)} -> ${op.output ? JSON.stringify(op.output) : 'unknown'}`,
    )
    .join('\n');
}
