import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';

export const APP_TOKEN = 'xapp-test-token';

/**
 * Slack's Socket Mode side: the WebSocket that `apps.connections.open` points to. It greets
 * with `hello`, pushes envelopes, asks for a connection to be replaced as Slack does every few
 * hours (a `disconnect` message, the connection left open), and collects the app's
 * acknowledgements. Like Slack, it takes several connections at once; envelopes go to the
 * newest open one unless a test names another.
 */
export async function startSocketModeStandIn() {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const acks = new Map<string, unknown>();
  /** Every connection in the order it was opened; a connection's number is its index here. */
  const sockets: WebSocket[] = [];
  const open = () => sockets.filter((s) => s.readyState === WebSocket.OPEN);
  /** How many times a connection closed leaving none open, other than by {@link drop} or `close`. */
  let gaps = 0;
  const cut = new WeakSet<WebSocket>();
  server.on('connection', (ws) => {
    sockets.push(ws);
    ws.send(
      JSON.stringify({ type: 'hello', num_connections: open().length, debug_info: { host: 'stand-in' } }),
    );
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { envelope_id?: string; payload?: unknown };
      if (message.envelope_id) acks.set(message.envelope_id, message.payload ?? null);
    });
    ws.on('close', () => {
      if (!cut.has(ws) && open().length === 0) gaps += 1;
    });
  });
  const newest = () => {
    const socket = open().at(-1);
    if (!socket) throw new Error('no Socket Mode connection');
    return sockets.indexOf(socket);
  };
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/`,
    connected: () => open().length > 0,
    /** Connections open now. */
    openCount: () => open().length,
    /** Connections opened since the start. */
    openedCount: () => sockets.length,
    /** Whether connection `n` (its number, from 0) is still open. */
    isOpen: (n: number) => sockets[n]?.readyState === WebSocket.OPEN,
    /** Closes that left no connection open: moments when Slack could deliver nothing. */
    gaps: () => gaps,
    acks,
    /** Pushes one envelope over connection `connection` (default: the newest open); returns its id. */
    send(
      type: 'slash_commands' | 'events_api',
      payload: Record<string, unknown>,
      connection: number = newest(),
    ): string {
      const socket = sockets[connection];
      if (socket?.readyState !== WebSocket.OPEN) throw new Error(`connection ${connection} is not open`);
      const envelopeId = randomUUID();
      socket.send(
        JSON.stringify({
          envelope_id: envelopeId,
          type,
          payload,
          accepts_response_payload: type === 'slash_commands',
        }),
      );
      return envelopeId;
    },
    /**
     * Asks for the newest connection to be replaced, as Slack does (`refresh_requested` every few
     * hours, `warning` shortly before it closes one), and leaves it open; returns its number.
     */
    askToReconnect(reason: 'refresh_requested' | 'warning' | 'link_disabled' = 'refresh_requested'): number {
      const n = newest();
      sockets[n]?.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'stand-in' } }));
      return n;
    },
    /** Cuts every open connection without a word, as a lost network does. */
    drop() {
      for (const socket of open()) {
        cut.add(socket);
        socket.terminate();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) {
          cut.add(client);
          client.terminate();
        }
        server.close(() => resolve());
      }),
  };
}
