import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Bounds the connections the HTTP server keeps: past `max` open connections, each new one closes
 * the connection idle the longest (a keep-alive connection between requests). A connection
 * with a request in flight is never closed for it, nor is one that has not sent its first request
 * yet (a new connection whose request is still on its way, a probe's among them), nor is the new
 * one refused, so a probe's or a caller's new connection is always heard; what the bound removes
 * is memory held by connections that carry nothing. One that never sends a request is the
 * server's headers timeout's. Returns the count of connections closed so far (for the metrics).
 */
export function boundIdleConnections(server: Server, max: number): () => number {
  // Idle sockets in the order they became idle (a Set keeps insertion order).
  const idle = new Set<Socket>();
  let open = 0;
  let closed = 0;
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => {
      open--;
      idle.delete(socket);
    });
    if (open > max) {
      for (const oldest of idle) {
        idle.delete(oldest);
        oldest.destroy();
        closed++;
        break;
      }
    }
  });
  // Registered before the app's own listener: the connection is busy from its request's start.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    idle.delete(socket);
    response.once('finish', () => {
      if (!socket.destroyed) idle.add(socket);
    });
  });
  return () => closed;
}
