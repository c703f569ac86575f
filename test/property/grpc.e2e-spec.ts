// Property-based: gRPC GetUser with any id and with arbitrary message bytes
// (harness: test/support/fuzz-app.ts).
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { getUser, getUserRaw } from '../../scripts/lib/grpc-client.mjs';
import {
  assertNothingInternal,
  DEADLINE,
  MAX_ID,
  query,
  raw,
  settings,
  useFuzzApp,
  users,
} from '../support/fuzz-app.js';

describe('property: gRPC GetUser answers any input with a defined status (e2e, fast-check)', () => {
  useFuzzApp();

  it('gRPC GetUser: any int32 id is OK (the stored name), NOT_FOUND or INVALID_ARGUMENT', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.integer({ min: 1, max: 10 }),
          fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
          fc.constantFrom(0, -1, MAX_ID, -(2 ** 31)),
        ),
        async (id) => {
          const [row] = await query<{ name: string }>('SELECT name FROM users WHERE id = $1', [id]);
          if (id <= 0) {
            const error = await getUser(users, id, DEADLINE);
            expect(error.code).toBe(grpc.status.INVALID_ARGUMENT);
            expect(error.details).toBe('id must be a positive 32-bit integer');
          } else if (!row) {
            const error = await getUser(users, id, DEADLINE);
            expect(error.code).toBe(grpc.status.NOT_FOUND);
            expect(error.details).toBe(`user ${id} not found`);
          } else {
            expect(await getUser(users, id, DEADLINE)).toEqual({
              code: grpc.status.OK,
              reply: { id, name: row.name },
            });
          }
        },
      ),
      settings(),
    );
  });

  it('gRPC GetUser with arbitrary message bytes: never UNKNOWN, never internals, server stays healthy', async () => {
    const valid = fc.integer({ min: 1, max: 8 }).map((id) => Buffer.from([0x08, id]));
    const bytes = fc.uint8Array({ maxLength: 64 }).map((array) => Buffer.from(array));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          bytes,
          valid,
          fc.tuple(valid, bytes).map(([a, b]) => Buffer.concat([a, b])),
        ),
        async (message) => {
          const { code, details } = await getUserRaw(raw, message, DEADLINE);
          if (code !== grpc.status.OK) {
            expect([
              grpc.status.INVALID_ARGUMENT,
              grpc.status.NOT_FOUND,
              // grpc-js' own answer to a message it cannot decode ("Error deserializing request").
              grpc.status.INTERNAL,
            ]).toContain(code);
            assertNothingInternal(details ?? '', '');
          }
        },
      ),
      settings(),
    );
    expect(await getUser(users, 1, DEADLINE)).toEqual({
      code: grpc.status.OK,
      reply: { id: 1, name: 'User 1' },
    });
  });
});
