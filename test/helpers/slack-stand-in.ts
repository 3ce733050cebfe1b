import type { IncomingMessage, ServerResponse } from 'node:http';
import { agentSessionsStandIn } from './agent-sessions-stand-in.js';
import { blockProblems, viewProblems } from './block-kit.js';
import { listen } from './http.js';
import { createRateLimiter, type RateLimitTable } from './slack-rate-limits.js';
import { createStepLedger } from './workflow-steps.js';

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
  blocks?: Record<string, unknown>[];
  bot_id: string;
  user: string;
}

/** A message people wrote (the bot reads them back as thread context). */
export interface HumanMessage {
  channel: string;
  ts: string;
  user: string;
  text: string;
  thread_ts?: string;
  /** Set for another app's message. */
  bot_id?: string;
  /** Set for messages that are not plain ones (`channel_join`, `thread_broadcast`…). */
  subtype?: string;
  username?: string;
  /**
   * The author's workspace (default the test workspace); null leaves the field out, as in the
   * example of Slack's conversations.replies documentation.
   */
  team?: string | null;
}

/**
 * An organisation-wide (Enterprise Grid) install, as the stand-in answers for it: auth.test names
 * the organisation, auth.teams.list its granted workspaces.
 */
export interface OrgInstall {
  enterpriseId: string;
  /** The workspaces the organisation granted the app, in the order auth.teams.list lists them. */
  workspaces: string[];
  /** The bot's user id (`W…` in an organisation). */
  botUserId: string;
  /**
   * auth.test's `team_id` for the org-level token: left out, empty, or the organisation's own id
   * (default), each of which Slack has been seen to send.
   */
  authTestTeamId?: 'absent' | 'empty' | 'enterprise';
}

/** What a call answers instead of the default: a Slack error, an HTTP status, or a delay. */
export type SlackFault =
  | { error: string }
  | { status: number; retryAfter?: number }
  | { delayMs: number }
  /** Records the call as accepted (the message exists) but never answers: a lost answer. */
  | { acceptThenHang: true }
  /** Answers as usual, with this warning in `response_metadata` (the Web API client logs it). */
  | { warning: string };

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
    /** The bot token calls must carry; default {@link BOT_TOKEN}. */
    botToken?: string;
    /**
     * Slack's rate limits (`SLACK_RATE_LIMITS` of `slack-rate-limits.ts`), enforced on every Web
     * API call before anything else: a refused call is answered 429 after `latencyMs` and is not
     * processed, recorded in `calls` or shown to `hooks`. A table of no limits (`{}`) only counts.
     * Without it (as every test runs), nothing is limited or counted.
     */
    rateLimits?: RateLimitTable;
  } = {},
) {
  const botToken = options.botToken ?? BOT_TOKEN;
  const limiter = options.rateLimits ? createRateLimiter(options.rateLimits) : undefined;
  /** Workflow Builder steps: the tokens given to executions, and the answers received. */
  const steps = createStepLedger();
  const calls: SlackCall[] = [];
  const responses: { path: string; body: Record<string, unknown> }[] = [];
  const messages: StoredMessage[] = [];
  const faults = new Map<string, SlackFault[]>();
  const served: { method: string; fault: SlackFault }[] = [];
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
  /** People of another organisation (Slack Connect), by user id, with their workspace. */
  const externalMembers = new Map<string, string>();
  /** People of Enterprise Grid organisations, by user id: their workspace and organisation. */
  const gridMembers = new Map<string, { teamId: string; enterpriseId: string }>();
  /** Set when the bot token is an organisation-wide install's (see {@link OrgInstall}). */
  const install: { org: OrgInstall | undefined } = { org: undefined };
  const singleChannelGuests = new Set<string>();
  /** Blocks or views Slack would refuse, with what is wrong. */
  const invalid: string[] = [];
  const humans: HumanMessage[] = [];
  /** Emoji the bot has on each message, by `channel:ts`. */
  const reactions = new Map<string, Set<string>>();
  /** Channels the bot is not a member of, and archived ones (conversations.info). */
  const notMember = new Set<string>();
  const archived = new Set<string>();
  /** Private channels with `C…` ids, as Slack has made since 2021 (`G…` ids are private too). */
  const privateChannels = new Set<string>();
  const views: Record<string, unknown>[] = [];
  /** The Home tab last published for each user. */
  const homes = new Map<string, Record<string, unknown>>();
  let tsCounter = 0;
  const agentSessions = agentSessionsStandIn();
  const checkBlocks = (method: string, args: Record<string, unknown>): string | undefined => {
    if (args.blocks === undefined) return undefined;
    const problems = blockProblems(args.blocks, 50);
    if (typeof args.text !== 'string' || args.text.length === 0) problems.push('text fallback missing');
    if (problems.length === 0) return undefined;
    invalid.push(`${method}: ${problems.join('; ')}`);
    return 'invalid_blocks';
  };
  const checkView = (method: string, view: unknown): string | undefined => {
    const problems = viewProblems(view);
    if (problems.length === 0) return undefined;
    invalid.push(`${method}: ${problems.join('; ')}`);
    return 'invalid_arguments';
  };
  /**
   * Message metadata as `@slack/types` declares it: an `event_type` string, and an `event_payload`
   * whose values are strings, numbers, booleans, objects of those, or arrays of such objects.
   * Anything else (`null` among them) is answered `invalid_metadata_format`.
   */
  const checkMetadata = (method: string, metadata: unknown): string | undefined => {
    if (metadata === undefined) return undefined;
    const scalar = (v: unknown) => ['string', 'number', 'boolean'].includes(typeof v);
    const flat = (v: unknown) =>
      typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every(scalar);
    const m = metadata as { event_type?: unknown; event_payload?: unknown };
    const payload = m.event_payload;
    const ok =
      typeof m.event_type === 'string' &&
      typeof payload === 'object' &&
      payload !== null &&
      Object.values(payload).every((v) => scalar(v) || flat(v) || (Array.isArray(v) && v.every(flat)));
    if (ok) return undefined;
    invalid.push(`${method}: metadata ${JSON.stringify(metadata)}`);
    return 'invalid_metadata_format';
  };
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

  const assistantAnswer = (args: Record<string, unknown>, valid: boolean) =>
    typeof args.channel_id === 'string' && typeof args.thread_ts === 'string' && valid
      ? { ok: true }
      : { ok: false, error: 'invalid_arguments' };

  const methods: Record<string, (args: Record<string, unknown>) => Record<string, unknown>> = {
    ...agentSessions.methods,
    'apps.connections.open': () => ({ ok: false, error: 'invalid_auth' }),
    // Answered by the step ledger, which knows which token the call carried.
    'functions.completeSuccess': () => ({ ok: true }),
    'functions.completeError': () => ({ ok: true }),
    'auth.test': () => (install.org ? orgAuthTest(install.org) : workspaceAuthTest),
    // Like Slack: an organisation's granted workspaces, a page of `limit` at a time.
    'auth.teams.list': (args) => {
      const all = install.org?.workspaces ?? [TEAM_ID];
      const from = Number(args.cursor ?? 0);
      const limit = Number(args.limit ?? 100);
      const next = from + limit < all.length ? String(from + limit) : '';
      return {
        ok: true,
        teams: all.slice(from, from + limit).map((id) => ({ id, name: `Workspace ${id}` })),
        response_metadata: { next_cursor: next },
      };
    },
    'chat.postMessage': (args) => {
      const refused =
        checkBlocks('chat.postMessage', args) ?? checkMetadata('chat.postMessage', args.metadata);
      if (refused) return { ok: false, error: refused };
      const message: StoredMessage = {
        channel: String(args.channel),
        ts: nextTs(),
        text: String(args.text ?? ''),
        bot_id: BOT_ID,
        user: BOT_USER_ID,
        ...(args.thread_ts ? { thread_ts: String(args.thread_ts) } : {}),
        ...(args.metadata ? { metadata: args.metadata as StoredMessage['metadata'] } : {}),
        ...(Array.isArray(args.blocks) ? { blocks: args.blocks as Record<string, unknown>[] } : {}),
      };
      messages.push(message);
      return { ok: true, channel: message.channel, ts: message.ts, message };
    },
    'chat.update': (args) => {
      const message = messages.find((m) => m.channel === args.channel && m.ts === args.ts);
      if (!message) return { ok: false, error: 'message_not_found' };
      const refused = checkBlocks('chat.update', args);
      if (refused) return { ok: false, error: refused };
      message.text = String(args.text ?? '');
      if (Array.isArray(args.blocks)) message.blocks = args.blocks as Record<string, unknown>[];
      return { ok: true, channel: message.channel, ts: message.ts };
    },
    'users.info': (args) => {
      const id = String(args.user);
      if (id.startsWith('U0GONE')) return { ok: false, error: 'user_not_found' };
      return {
        ok: true,
        user: {
          id,
          name: id.toLowerCase(),
          real_name: `Real ${id}`,
          profile: { display_name: id === 'U0ALICE' ? 'alice' : id === 'U0BOB' ? 'bob' : '' },
          is_bot: false,
          deleted: false,
          is_restricted: guests.has(id),
          is_ultra_restricted: singleChannelGuests.has(id),
          team_id: gridMembers.get(id)?.teamId ?? externalMembers.get(id) ?? TEAM_ID,
          ...gridUser(id),
        },
      };
    },
    'chat.postEphemeral': () => ({ ok: true, message_ts: nextTs() }),
    // The assistant pane: like Slack, each needs the thread's channel and ts.
    'assistant.threads.setStatus': (args) => assistantAnswer(args, typeof args.status === 'string'),
    'assistant.threads.setTitle': (args) => assistantAnswer(args, typeof args.title === 'string'),
    // thread_ts is optional here: agent messaging sets prompts for the conversation.
    'assistant.threads.setSuggestedPrompts': (args) =>
      assistantAnswer(
        { thread_ts: '', ...args },
        Array.isArray(args.prompts) && args.prompts.length >= 1 && args.prompts.length <= 4,
      ),
    'reactions.add': (args) => {
      const key = `${args.channel}:${args.timestamp}`;
      const set = reactions.get(key) ?? new Set<string>();
      if (set.has(String(args.name))) return { ok: false, error: 'already_reacted' };
      set.add(String(args.name));
      reactions.set(key, set);
      return { ok: true };
    },
    'reactions.remove': (args) => {
      const set = reactions.get(`${args.channel}:${args.timestamp}`);
      if (!set?.delete(String(args.name))) return { ok: false, error: 'no_reaction' };
      return { ok: true };
    },
    'conversations.info': (args) => {
      const id = String(args.channel);
      if (id.startsWith('C0MISSING')) return { ok: false, error: 'channel_not_found' };
      return {
        ok: true,
        channel: {
          id,
          is_member: !notMember.has(id),
          is_archived: archived.has(id),
          is_im: id.startsWith('D'),
          is_mpim: false,
          is_private: id.startsWith('D') || id.startsWith('G') || privateChannels.has(id),
        },
      };
    },
    // Like Slack: a person's DM with the bot has one stable id; users.info's gone users have none.
    'conversations.open': (args) => {
      const user = String(args.users ?? '');
      if (!/^[UW][A-Z0-9]+$/.test(user) || user.includes(',')) return { ok: false, error: 'user_not_found' };
      if (user.startsWith('U0GONE')) return { ok: false, error: 'user_not_found' };
      return { ok: true, channel: { id: `D${user.slice(1)}` } };
    },
    'views.open': (args) => {
      const refused = checkView('views.open', args.view);
      if (refused) return { ok: false, error: refused };
      if (typeof args.trigger_id !== 'string' || !args.trigger_id)
        return { ok: false, error: 'invalid_trigger_id' };
      views.push(args.view as Record<string, unknown>);
      return { ok: true, view: { id: `V${views.length}` } };
    },
    'views.publish': (args) => {
      const refused = checkView('views.publish', args.view);
      if (refused) return { ok: false, error: refused };
      homes.set(String(args.user_id), args.view as Record<string, unknown>);
      return { ok: true };
    },
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
      // Like Slack: `oldest` and `latest` bound the replies, exclusively; the parent always comes.
      const after = Number(args.oldest ?? 0);
      const before = args.latest ? Number(args.latest) : Number.POSITIVE_INFINITY;
      const thread = [
        ...humans.map(({ team, ...m }) => (team === null ? m : { ...m, team: team ?? TEAM_ID })),
        ...messages,
      ]
        .filter((m) => m.channel === args.channel && (m.ts === args.ts || m.thread_ts === args.ts))
        .filter((m) => m.ts === args.ts || (Number(m.ts) > after && Number(m.ts) < before))
        .sort((a, b) => Number(a.ts) - Number(b.ts)) as StoredMessage[];
      const withMeta = args.include_all_metadata === 'true' || args.include_all_metadata === true;
      return {
        ok: true,
        messages: thread.map(({ metadata, ...m }) => (withMeta && metadata ? { ...m, metadata } : m)),
        has_more: false,
      };
    },
  };

  /** users.info's `enterprise_user` for a person of an Enterprise Grid organisation. */
  const gridUser = (id: string) => {
    const grid = gridMembers.get(id);
    if (!grid) return {};
    return {
      enterprise_user: {
        id,
        enterprise_id: grid.enterpriseId,
        enterprise_name: `Org ${grid.enterpriseId}`,
        is_admin: false,
        is_owner: false,
        teams: [grid.teamId],
      },
    };
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
      // A queued fault answers for Slack: the app token refused later (`token_revoked`), an outage.
      const fault = faults.get(method)?.shift();
      if (fault && 'error' in fault) return send(res, { ok: false, error: fault.error });
      if (fault && 'status' in fault) return send(res, { ok: false, error: 'internal_error' }, fault.status);
      const ok = options.socketModeUrl && req.headers.authorization === `Bearer ${options.appToken}`;
      return send(res, ok ? { ok: true, url: options.socketModeUrl } : { ok: false, error: 'invalid_auth' });
    }
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    // A step execution's token is good for answering that step, and nothing else.
    const stepToken = method.startsWith('functions.') && steps.isFunctionToken(bearer);
    if (bearer !== botToken && !stepToken) {
      send(res, { ok: false, error: 'invalid_auth' });
      return;
    }
    const limited = limiter?.admit(method, args);
    if (limited) {
      if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
      return send(res, { ok: false, error: 'ratelimited' }, 429, {
        'retry-after': String(limited.retryAfterS),
      });
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
    if (fault) served.push({ method, fault });
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
    const stepAnswer = steps.methods[method as keyof typeof steps.methods];
    const answer = stepAnswer ? stepAnswer(args, stepToken ? 'function' : 'bot') : handler(args);
    if (fault && 'acceptThenHang' in fault) {
      res.socket?.destroy();
      return;
    }
    if (fault && 'warning' in fault)
      return send(res, { ...answer, response_metadata: { warnings: [fault.warning] } });
    send(res, answer);
  });

  return {
    apiUrl: `${stand.url}/api/`,
    responseUrl: (id: string) => `${stand.url}/respond/${id}`,
    calls,
    responses,
    guests,
    externalMembers,
    gridMembers,
    /** Makes the bot token an organisation-wide install's (undone by {@link reset}). */
    installOrgWide(org: OrgInstall) {
      install.org = org;
    },
    singleChannelGuests,
    messages,
    unexpected,
    /** Blocks and views Slack would have refused; tests expect none. */
    invalid,
    /** Messages people wrote, readable by conversations.replies. */
    humans,
    reactions,
    /** The bot's emoji on a message. */
    reactionsOn: (channel: string, ts: string) => [...(reactions.get(`${channel}:${ts}`) ?? [])],
    notMember,
    archived,
    privateChannels,
    /** Modals the bot opened. */
    views,
    /** Workflow Builder steps: tokens Slack gave executions, and the answers it accepted. */
    steps,
    homes,
    /** Agent sessions the bot set (`agents.sessions.*`). */
    sessions: agentSessions.sessions,
    sessionOf: agentSessions.sessionOf,
    /** Makes `user` someone who is not a member of `channel` (agents.sessions.setStatus's initiator). */
    notAMember: (channel: string, user: string) => agentSessions.outsiders.add(`${channel}:${user}`),
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
    /** Faults queued with {@link fail} or {@link failIf} that a call got, in order. */
    served,
    /** How many queued faults no call has got yet. */
    pendingFaults: () =>
      [...faults.values()].reduce((n, queued) => n + queued.length, 0) +
      conditionalFaults.reduce((n, f) => n + f.times, 0),
    callsTo: (method: string) => calls.filter((c) => c.method === method),
    /** With `rateLimits`: each method's calls accepted, refused with 429, and made during Retry-After. */
    rateLimitCounts: () => limiter?.counts(),
    /** Bot posts in the thread rooted at `threadTs` (not the root itself). */
    threadPosts: (threadTs: string) => messages.filter((m) => m.thread_ts === threadTs),
    /** Forgets every call, fault, message and setting, as if the stand-in had just started. */
    reset() {
      for (const list of [calls, responses, messages, served, unexpected, invalid, humans, views])
        list.length = 0;
      conditionalFaults.length = 0;
      for (const collection of [faults, outage, guests, externalMembers, singleChannelGuests, reactions])
        collection.clear();
      gridMembers.clear();
      install.org = undefined;
      for (const collection of [notMember, archived, privateChannels, homes, agentSessions.sessions])
        collection.clear();
      agentSessions.outsiders.clear();
      steps.reset();
    },
    close: stand.close,
  };
}

export type SlackStandIn = Awaited<ReturnType<typeof startSlackStandIn>>;

/** auth.test for the test workspace's bot token. */
const workspaceAuthTest = {
  ok: true,
  team_id: TEAM_ID,
  user_id: BOT_USER_ID,
  bot_id: BOT_ID,
  team: 'Test',
  url: 'https://test-team.slack.com/',
};

/** auth.test for an organisation-wide install's token: it answers for the organisation. */
function orgAuthTest(org: OrgInstall) {
  const teamId = org.authTestTeamId ?? 'enterprise';
  return {
    ok: true,
    url: 'https://test-org.enterprise.slack.com/',
    team: 'Test Org',
    user: 'docs-agent',
    ...(teamId === 'absent' ? {} : { team_id: teamId === 'empty' ? '' : org.enterpriseId }),
    user_id: org.botUserId,
    bot_id: BOT_ID,
    enterprise_id: org.enterpriseId,
    is_enterprise_install: true,
  };
}
