import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen } from './http.js';

export const TEAM_ID = 'T0TEST';
export const BOT_USER_ID = 'U0BOT';
export const BOT_ID = 'B0BOT';
export const BOT_TOKEN = 'xoxb-test-token';

export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
  at: number;
}

export interface StoredMessage {
  channel: string;
  ts: string;
  text: string;
  thread_ts?: string;
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  bot_id: string;
  user: string;
}

/** What a call answers instead of the default: a Slack error, an HTTP status, or a delay. */
export type SlackFault =
  | { error: string }
  | { status: number; retryAfter?: number }
  | { delayMs: number }
  /** Records the call as accepted (the message exists) but never answers: a lost answer. */
  | { acceptThenHang: true };

/**
 * A loopback stand-in for Slack's Web API (`SLACK_API_URL`) and for response_urls. It keeps
 * the messages the bot posted, answers like Slack does, and fails calls on demand.
 */
export interface SlackHooks {
  /** Called before a Web API call is processed; 'drop' closes the connection unprocessed. */
  before?(call: SlackCall): 'drop' | undefined;
  /** Called once the answer to a Web API call has been sent. */
  after?(call: SlackCall): void;
}

export async function startSlackStandIn(
  options: {
    socketModeUrl?: string;
    appToken?: string;
    hooks?: SlackHooks;
    /** How long every Web API answer takes, in milliseconds (Slack is not on loopback). */
    latencyMs?: number;
  } = {},
) {
  const calls: SlackCall[] = [];
  const responses: { path: string; body: Record<string, unknown> }[] = [];
  const messages: StoredMessage[] = [];
  const faults = new Map<string, SlackFault[]>();
  const unexpected: string[] = [];
  const outage = new Set<string>();
  const conditionalFaults: {
    method: string;
    when: (args: Record<string, unknown>) => boolean;
    fault: SlackFault;
    times: number;
  }[] = [];
  /** Multi-channel and single-channel guests, by user id. */
  const guests = new Set<string>();
  const singleChannelGuests = new Set<string>();
  let tsCounter = 0;
  // Like Slack's: seconds now, then a counter, so `oldest` filters work on them.
  const nextTs = () => `${Math.floor(Date.now() / 1000)}.${String(++tsCounter).padStart(6, '0')}`;

  const parseArgs = (req: IncomingMessage, body: string): Record<string, unknown> => {
    const type = req.headers['content-type'] ?? '';
    const raw: Record<string, unknown> = type.includes('application/json')
      ? (JSON.parse(body || '{}') as Record<string, unknown>)
      : Object.fromEntries(new URLSearchParams(body));
    // The Web API client sends nested arguments as JSON strings in form bodies.
    for (const [key, value] of Object.entries(raw)) {
      if (typeof value === 'string' && (value.startsWith('{') || value.startsWith('['))) {
        try {
          raw[key] = JSON.parse(value);
        } catch {
          // leave as sent
        }
      }
    }
    return raw;
  };

  const send = (
    res: ServerResponse,
    body: Record<string, unknown>,
    status = 200,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  const methods: Record<string, (args: Record<string, unknown>) => Record<string, unknown>> = {
    'apps.connections.open': () => ({ ok: false, error: 'invalid_auth' }),
    'auth.test': () => ({ ok: true, team_id: TEAM_ID, user_id: BOT_USER_ID, bot_id: BOT_ID, team: 'Test' }),
    'chat.postMessage': (args) => {
      const message: StoredMessage = {
        channel: String(args.channel),
        ts: nextTs(),
        text: String(args.text ?? ''),
        bot_id: BOT_ID,
        user: BOT_USER_ID,
        ...(args.thread_ts ? { thread_ts: String(args.thread_ts) } : {}),
        ...(args.metadata ? { metadata: args.metadata as StoredMessage['metadata'] } : {}),
      };
      messages.push(message);
      return { ok: true, channel: message.channel, ts: message.ts, message };
    },
    'chat.update': (args) => {
      const message = messages.find((m) => m.channel === args.channel && m.ts === args.ts);
      if (!message) return { ok: false, error: 'message_not_found' };
      message.text = String(args.text ?? '');
      return { ok: true, channel: message.channel, ts: message.ts };
    },
    'users.info': (args) => {
      const id = String(args.user);
      if (id.startsWith('U0GONE')) return { ok: false, error: 'user_not_found' };
      return {
        ok: true,
        user: {
          id,
          is_bot: false,
          deleted: false,
          is_restricted: guests.has(id),
          is_ultra_restricted: singleChannelGuests.has(id),
        },
      };
    },
    'chat.postEphemeral': () => ({ ok: true, message_ts: nextTs() }),
    'reactions.add': () => ({ ok: true }),
    'conversations.history': (args) => {
      const withMeta = args.include_all_metadata === 'true' || args.include_all_metadata === true;
      const oldest = Number(args.oldest ?? 0);
      const top = messages.filter(
        (m) => m.channel === args.channel && !m.thread_ts && Number(m.ts) >= oldest,
      );
      return {
        ok: true,
        messages: top.reverse().map(({ metadata, ...m }) => (withMeta && metadata ? { ...m, metadata } : m)),
        has_more: false,
      };
    },
    'conversations.replies': (args) => {
      const thread = messages.filter(
        (m) => m.channel === args.channel && (m.ts === args.ts || m.thread_ts === args.ts),
      );
      const withMeta = args.include_all_metadata === 'true' || args.include_all_metadata === true;
      return {
        ok: true,
        messages: thread.map(({ metadata, ...m }) => (withMeta && metadata ? { ...m, metadata } : m)),
        has_more: false,
      };
    },
  };

  const stand = await listen(async (req, body, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname.startsWith('/respond/expired')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('expired_url');
      return;
    }
    if (url.pathname.startsWith('/respond/')) {
      responses.push({ path: url.pathname, body: JSON.parse(body || '{}') });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    const method = url.pathname.replace(/^\/api\//, '');
    const args = parseArgs(req, body);
    const handler = methods[method];
    if (!handler) {
      unexpected.push(method);
      send(res, { ok: false, error: 'unknown_method' });
      return;
    }
    if (method === 'apps.connections.open') {
      calls.push({ method, args, at: Date.now() });
      const ok = options.socketModeUrl && req.headers.authorization === `Bearer ${options.appToken}`;
      return send(res, ok ? { ok: true, url: options.socketModeUrl } : { ok: false, error: 'invalid_auth' });
    }
    if (req.headers.authorization !== `Bearer ${BOT_TOKEN}`) {
      send(res, { ok: false, error: 'invalid_auth' });
      return;
    }
    const call = { method, args, at: Date.now() };
    if (options.hooks?.before?.(call) === 'drop') {
      res.socket?.destroy();
      return;
    }
    if (options.hooks?.after) res.on('finish', () => options.hooks?.after?.(call));
    if (outage.has(method)) {
      calls.push({ method, args, at: Date.now() });
      return send(res, { ok: false, error: 'service_unavailable' }, 503);
    }
    const conditional = conditionalFaults.find((f) => f.method === method && f.times > 0 && f.when(args));
    if (conditional) conditional.times -= 1;
    const fault = conditional?.fault ?? faults.get(method)?.shift();
    calls.push({ method, args, at: Date.now() });
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
    if (fault && 'delayMs' in fault) await new Promise((r) => setTimeout(r, fault.delayMs));
    if (fault && 'error' in fault) return send(res, { ok: false, error: fault.error });
    if (fault && 'status' in fault) {
      return send(
        res,
        { ok: false, error: fault.status === 429 ? 'ratelimited' : 'internal_error' },
        fault.status,
        fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {},
      );
    }
    const answer = handler(args);
    if (fault && 'acceptThenHang' in fault) {
      res.socket?.destroy();
      return;
    }
    send(res, answer);
  });

  return {
    apiUrl: `${stand.url}/api/`,
    responseUrl: (id: string) => `${stand.url}/respond/${id}`,
    calls,
    responses,
    guests,
    singleChannelGuests,
    messages,
    unexpected,
    /** Queues faults for the next calls of `method`, in order. */
    fail(method: string, ...queued: SlackFault[]) {
      faults.set(method, [...(faults.get(method) ?? []), ...queued]);
    },
    /** Every call of `method` answers 503 until {@link end} is called. */
    outage: {
      begin: (method: string) => outage.add(method),
      end: (method: string) => outage.delete(method),
    },
    /** Fails the next `times` calls of `method` whose arguments match `when`. */
    failIf(method: string, when: (args: Record<string, unknown>) => boolean, fault: SlackFault, times = 1) {
      conditionalFaults.push({ method, when, fault, times });
    },
    callsTo: (method: string) => calls.filter((c) => c.method === method),
    /** Bot posts in the thread rooted at `threadTs` (not the root itself). */
    threadPosts: (threadTs: string) => messages.filter((m) => m.thread_ts === threadTs),
    close: stand.close,
  };
}

export type SlackStandIn = Awaited<ReturnType<typeof startSlackStandIn>>;
