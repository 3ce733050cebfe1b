import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export const APP_TOKEN = 'xapp-test-token';

/**
 * Slack's Socket Mode side: the WebSocket that `apps.connections.open` points to. It greets
 * with `hello`, pushes envelopes, and collects the app's acknowledgements.
 */
export async function startSocketModeStandIn() {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const acks = new Map<string, unknown>();
  let socket: WebSocket | undefined;
  server.on('connection', (ws) => {
    socket = ws;
    ws.send(JSON.stringify({ type: 'hello', num_connections: 1, debug_info: { host: 'stand-in' } }));
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { envelope_id?: string; payload?: unknown };
      if (message.envelope_id) acks.set(message.envelope_id, message.payload ?? null);
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/`,
    connected: () => socket !== undefined,
    acks,
    /** Pushes one envelope; returns its id. */
    send(type: 'slash_commands' | 'events_api', payload: Record<string, unknown>): string {
      if (!socket) throw new Error('no Socket Mode connection');
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
