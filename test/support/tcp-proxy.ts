import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that a test can cut and restore, to make the database
 * unreachable for one app without stopping the server the other tests share. With
 * `idleTimeoutMs` it also closes a connection that carried nothing either way for that long, as
 * a mesh proxy or a load balancer does.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private dropping = false;
  private frozen = false;
  private delayMs = 0;
  port = 0;
  /** Connections accepted so far: each one a connection attempt of the service. */
  accepted = 0;
  /** Connections that carried a PostgreSQL CancelRequest (a cancel of a running statement). */
  cancelRequests = 0;
  /** Connections closed for being idle (idleTimeoutMs). */
  idleClosed = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
    private readonly options: { idleTimeoutMs?: number } = {},
  ) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      this.accepted += 1;
      if (this.dropping) {
        client.destroy();
        return;
      }
      if (this.frozen) {
        // Accepted, then silence: a connection to a host that is gone.
        this.sockets.add(client);
        client.on('close', () => this.sockets.delete(client));
        client.on('error', () => client.destroy());
        client.pause();
        return;
      }
      if (this.delayMs > 0) {
        // Read (and counted) at once, sent on later.
        const held: Buffer[] = [];
        const hold = (chunk: Buffer) => {
          if (held.length === 0 && isCancelRequest(chunk)) this.cancelRequests += 1;
          held.push(chunk);
        };
        client.on('data', hold);
        this.sockets.add(client);
        setTimeout(() => {
          client.off('data', hold);
          this.forward(client, held);
        }, this.delayMs);
        return;
      }
      client.once('data', (first: Buffer) => {
        if (isCancelRequest(first)) this.cancelRequests += 1;
      });
      this.forward(client, []);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  private forward(client: net.Socket, held: Buffer[]): void {
    if (client.destroyed) return;
    const upstream = net.connect(this.targetPort, this.targetHost);
    for (const chunk of held) upstream.write(chunk);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
    // The client's socket sees the bytes of both directions (it reads one, writes the other).
    const { idleTimeoutMs } = this.options;
    if (idleTimeoutMs) {
      client.setTimeout(idleTimeoutMs, () => {
        this.idleClosed += 1;
        client.destroy();
        upstream.destroy();
      });
    }
  }

  /**
   * New connections reach the server only `ms` after they were accepted (what they send waits
   * meanwhile): a slow network path for a cancel request, which travels on a connection of its
   * own. Connections already open are not affected; 0 ends the delay.
   */
  delayNewConnections(ms: number): void {
    this.delayMs = ms;
  }

  /** Drops every open connection and refuses new ones (ECONNREFUSED), like a stopped server. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Drops every open connection and closes each new one as soon as it is accepted, like HAProxy
   * or a Kubernetes Service with no backend: the worst case for a client that retries at once.
   */
  drop(): void {
    this.dropping = true;
    for (const socket of this.sockets) socket.destroy();
  }

  /**
   * Stops forwarding in both directions while every connection stays open, and leaves new ones
   * unanswered: a primary whose node vanished without closing anything (no RST, no FIN).
   */
  freeze(): void {
    this.frozen = true;
    for (const socket of this.sockets) {
      socket.unpipe();
      socket.pause();
    }
  }

  /**
   * Listens again on the same port and forwards again (nothing to do when it is not cut). The
   * connections frozen meanwhile are closed, as a vanished host's would be once it is back.
   */
  async restore(): Promise<void> {
    if (this.frozen) {
      this.frozen = false;
      for (const socket of this.sockets) socket.destroy();
    }
    this.dropping = false;
    if (!this.server) await this.start();
  }
}

/** PostgreSQL's CancelRequest: length 16, then the code 80877102, then the backend's key. */
function isCancelRequest(first: Buffer): boolean {
  return first.length >= 8 && first.readInt32BE(0) === 16 && first.readInt32BE(4) === 80877102;
}
