// users.Users/ListUserChanges and WatchUserChanges: the feed over gRPC, its errors, heartbeats,
// resumption, and shutdown. (A stream quiet for 60 s: changes-quiet-stream.e2e-spec.ts.)
import * as grpc from '@grpc/grpc-js';
import {
  getUser,
  grpcClients,
  listUserChanges,
  watchUserChanges,
  type GrpcClients,
} from '../../scripts/lib/grpc-client.mjs';
import { ChangesPurge } from '../../src/changes/changes-purge.js';
import { isHeartbeat, versionOf } from '../support/changes-feed.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

const TOKEN = /^[\w-]+\.[\w-]{16}$/;

describe('gRPC change feed (e2e)', () => {
  let t: TestApp;
  let clients: GrpcClients;

  beforeAll(async () => {
    t = await createTestApp({
      grpc: true,
      env: { CHANGES_RETENTION_HOURS: '1', CHANGES_PURGE_INTERVAL_MS: '0' },
    });
    clients = grpcClients(t.grpcAddress);
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(async () => {
    clients?.close();
    await t?.close();
  });

  const sql = (text: string) => t.dataSource.query(text);

  it('lists the same events as HTTP, as messages, and pages with next_page_token', async () => {
    await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    await t.http().patch('/users/1').send({ email: 'ada@example.com' }).expect(200);
    const first = await listUserChanges(clients.users, { page_size: 1 });
    expect(first).toEqual({
      code: grpc.status.OK,
      reply: {
        events: [
          {
            id: '1.1',
            source: '/users-service',
            spec_version: '1.0',
            type: 'users.user.created.v1',
            subject: '1',
            time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
            sequence: '0000000001',
            data_content_type: 'application/json',
            data: { id: 1, version: 1, changed: ['name', 'email', 'role'] },
          },
        ],
        next_page_token: expect.stringMatching(TOKEN),
      },
    });
    const second = await listUserChanges(clients.users, {
      page_token: first.reply!.next_page_token,
    });
    expect(second.reply!.events.map((e) => [e.type, e.data.changed])).toEqual([
      ['users.user.updated.v1', ['email']],
    ]);
    const http = await t.http().get('/users/changes').query({ limit: 1 }).expect(200);
    expect(http.body.next).toBe(first.reply!.next_page_token);
  });

  it('answers INVALID_ARGUMENT for a bad token or size, FAILED_PRECONDITION for an expired token', async () => {
    expect(await listUserChanges(clients.users, { page_token: 'garbage' })).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'the change token is invalid: it was altered or not issued here',
    });
    expect(await listUserChanges(clients.users, { page_size: 1001 })).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'page_size must be between 0 and 1000',
    });
    expect(await listUserChanges(clients.users, { wait_seconds: 31 })).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'wait_seconds must be between 0 and 30',
    });
    await sql(`INSERT INTO users (name) VALUES ('A')`);
    const { reply } = await listUserChanges(clients.users, {});
    await sql(`INSERT INTO users (name) VALUES ('B')`);
    await sql(`UPDATE user_changes SET at = now() - interval '2 hours'`);
    expect(await t.app.get(ChangesPurge).purgeExpired()).toBe(2);
    const expired = await listUserChanges(clients.users, { page_token: reply!.next_page_token });
    expect(expired.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(expired.details).toMatch(/^the change token has expired/);
    const watch = watchUserChanges(clients.users, reply!.next_page_token);
    expect(await watch.ended).toEqual({
      code: grpc.status.FAILED_PRECONDITION,
      details: expired.details,
    });
  });

  it('long-polls with wait_seconds until a write', async () => {
    const { reply } = await listUserChanges(clients.users, {});
    const poll = listUserChanges(clients.users, {
      page_token: reply!.next_page_token,
      wait_seconds: 20,
    });
    await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    const woken = await poll;
    expect(woken.reply!.events.map((e) => e.id)).toEqual(['1.1']);
  });

  it('watches: events as they come, a heartbeat with the current token within 10 s of silence, and a resume from a heartbeat', async () => {
    await sql(`INSERT INTO users (name) VALUES ('A')`);
    const watch = watchUserChanges(clients.users);
    expect(versionOf(await watch.next())).toEqual([1, 1]);
    const heartbeat = await watch.next();
    expect(heartbeat).toEqual({
      heartbeat: { time: expect.any(String) },
      page_token: expect.stringMatching(TOKEN),
      content: 'heartbeat',
    });
    const beat = Date.now();
    const again = await watch.next(10_000);
    expect(isHeartbeat(again)).toBe(true);
    expect(Date.now() - beat).toBeLessThanOrEqual(10_000);
    expect(again.page_token).toBe(heartbeat.page_token);

    await sql(`UPDATE users SET role = 'ops' WHERE id = 1`);
    const update = await watch.next();
    expect(versionOf(update)).toEqual([1, 2]);
    watch.cancel();
    expect((await watch.ended).code).toBe(grpc.status.CANCELLED);

    // Written while nobody watched; a watch from the last heartbeat gets exactly what followed it.
    await sql(`INSERT INTO users (name) VALUES ('B')`);
    const resumed = watchUserChanges(clients.users, again.page_token);
    expect(versionOf(await resumed.next())).toEqual([1, 2]);
    expect(versionOf(await resumed.next())).toEqual([2, 1]);
    expect(isHeartbeat(await resumed.next())).toBe(true);
    resumed.cancel();
  });

  it('needs no scope with authentication off, and reads through the same service as GetUser', async () => {
    await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    expect((await getUser(clients.users, 1)).reply).toEqual({ id: 1, name: 'Ada' });
    expect((await listUserChanges(clients.users, {})).reply!.events).toHaveLength(1);
  });
});

describe('gRPC watch at shutdown (e2e)', () => {
  it('ends open streams with UNAVAILABLE at the end of the drain, resumable from their token', async () => {
    const t = await createTestApp({ grpc: true, env: { SHUTDOWN_DRAIN_MS: '300' } });
    const clients = grpcClients(t.grpcAddress);
    let closed: Promise<void> | undefined;
    try {
      const watch = watchUserChanges(clients.users);
      expect(isHeartbeat(await watch.next())).toBe(true);
      closed = t.close();
      expect(await watch.ended).toEqual({
        code: grpc.status.UNAVAILABLE,
        details: 'the service is shutting down: resume from the last page_token',
      });
    } finally {
      clients.close();
      await (closed ?? t.close());
    }
  });
});
