// The change feed relay (`npm run relay`) into a real NATS JetStream: killed with SIGKILL in the
// middle of a backlog and started again, it leaves every event in the stream exactly once, in
// feed order. Needs nats-server with JetStream on 127.0.0.1:4222 (TEST_NATS_URL); skipped,
// saying so, without one.
import net from 'node:net';
import path from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { projectRoot } from '../../src/project-root.js';
import { startService, waitFor, type ServiceProcess } from '../../scripts/lib/service-process.mjs';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const BACKLOG = 20_000;
const LATER = 2_000;

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port || 4222), hostname);
    const settle = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(1000, () => settle(false));
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
  });
}

const natsUp = await reachable(NATS_URL);

if (!natsUp) {
  describe('change feed relay', () => {
    it(`is skipped: no NATS server at ${NATS_URL}`, () => {
      console.log(
        `relay test skipped: no NATS JetStream at ${NATS_URL} (apt-get install nats-server)`,
      );
      expect(natsUp).toBe(false);
    });
  });
}

(natsUp ? describe : describe.skip)('change feed relay to NATS JetStream (e2e)', () => {
  let t: TestApp;
  let nats: NatsConnection;
  let manager: JetStreamManager;
  let relay: ServiceProcess | undefined;
  const run = `${process.pid}_${Date.now()}`;
  const stream = `USERS_CHANGES_TEST_${run}`;
  const prefix = `relaytest${run}.`;

  const startRelay = () =>
    startService({
      name: 'relay',
      entry: path.join(projectRoot(), 'scripts', 'relay.mjs'),
      env: {
        RELAY_GRPC_ADDRESS: t.grpcAddress,
        RELAY_NATS_URL: NATS_URL,
        RELAY_STREAM: stream,
        RELAY_SUBJECT_PREFIX: prefix,
      },
    });
  const stored = async () => (await manager.streams.info(stream)).state.messages;

  beforeAll(async () => {
    t = await createTestApp({ grpc: true });
    nats = await connect({ servers: NATS_URL });
    manager = await jetstreamManager(nats);
  });

  afterAll(async () => {
    await relay?.stop();
    await manager?.streams.delete(stream).catch(() => false);
    await nats?.close();
    await resetDatabase(t.dataSource);
    await t?.close();
  });

  it('publishes every event once, in feed order, through a SIGKILL of the relay', async () => {
    const sql = (text: string) => t.dataSource.query(text);
    await sql(`INSERT INTO users (name) SELECT 'r' || g FROM generate_series(1, ${BACKLOG / 2}) g`);
    await sql(`UPDATE users SET role = 'relayed'`);

    relay = await startRelay();
    await waitFor(
      'a part of the backlog in the stream',
      async () => (await stored()) >= BACKLOG / 4,
      30_000,
    );
    relay.child.kill('SIGKILL');
    await relay.exited;
    const atKill = await stored();
    expect(atKill).toBeLessThan(BACKLOG);

    relay = await startRelay();
    await sql(`INSERT INTO users (name) SELECT 'l' || g FROM generate_series(1, ${LATER}) g`);
    const [{ n: events }] = await sql('SELECT count(*)::int AS n FROM user_changes');
    expect(events).toBe(BACKLOG + LATER);
    await waitFor('every event in the stream', async () => (await stored()) >= events, 60_000);
    expect(await relay.stop()).toEqual({ code: 0, signal: null });

    const { state } = await manager.streams.info(stream);
    expect(state.messages).toBe(events);
    const ids: string[] = [];
    const last = new Map<number, number>();
    const disorder: string[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const message = await manager.streams.getMessage(stream, { seq });
      const event = message!.json<{ type: string; data: { id: number; version: number } }>();
      ids.push(message!.header.get('Nats-Msg-Id'));
      expect(message!.subject).toBe(`${prefix}${event.type}`);
      const { id, version } = event.data;
      if (version !== (last.get(id) ?? 0) + 1)
        disorder.push(`${id}: ${version} after ${last.get(id)}`);
      last.set(id, version);
    }
    const keys = await sql(`SELECT user_id || '.' || version AS key FROM user_changes`);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(keys.map((row: { key: string }) => row.key)));
    expect(disorder).toEqual([]);
    console.log(`relay: ${events} events, ${atKill} stored when the relay was killed, each once`);
  }, 120_000);
});
