import type { SlackGateway } from './gateway.js';

/** The logger's redaction (`createRedactor` of every configured secret), for one string. */
export type Redact = (text: string) => string;

/**
 * `value` with every string in it, however deep (a message's blocks, a view), passed through
 * `redact`. Keys are kept: the bot writes them itself.
 */
export function redactDeep<T>(value: T, redact: Redact): T {
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return redact(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item !== null && typeof item === 'object') {
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, walk(inner)]));
    }
    return item;
  };
  return walk(value) as T;
}

/**
 * The gateway with every text it shows people masked as the logs are: messages and their
 * blocks, ephemeral notes, `response_url` replies, views and the assistant pane's status, title
 * and prompts. The texts are masked where they are built from what the agent API said; this is
 * the last check, on the way out, for any path that brings a secret from elsewhere. Message
 * metadata is left as it is: the bot writes its keys itself and puts no secret there.
 */
export function redactingGateway(slack: SlackGateway, redact: Redact): SlackGateway {
  const masked = <T>(value: T) => redactDeep(value, redact);
  return {
    ...slack,
    postMessage: ({ metadata, ...args }) =>
      slack.postMessage({ ...masked(args), ...(metadata ? { metadata } : {}) }),
    // Looked for as it was posted: masked.
    findUnmarked: (args) => slack.findUnmarked({ ...args, text: masked(args.text) }),
    updateMessage: (args) => slack.updateMessage(masked(args)),
    postEphemeral: (args) => slack.postEphemeral(masked(args)),
    respond: (responseUrl, text) => slack.respond(responseUrl, masked(text)),
    openView: (triggerId, view) => slack.openView(triggerId, masked(view)),
    publishHome: (userId, view) => slack.publishHome(userId, masked(view)),
    assistantThread: (args) => slack.assistantThread(masked(args)),
  };
}
