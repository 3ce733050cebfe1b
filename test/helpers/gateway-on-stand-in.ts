import { WebClient } from '@slack/web-api';
import { createOutbox, type Outbox, type OutboxOptions } from '../../src/delivery/outbox.js';
import { leasesFor } from '../../src/jobs/job-context.js';
import type { Redact } from '../../src/logging/logger.js';
import { createLogger, type Logger } from '../../src/logging/logger.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { createSlackGateway, type SlackGateway } from '../../src/slack/gateway.js';
import { HINTS } from './rendering.js';
import { BOT_TOKEN, type SlackStandIn, startSlackStandIn } from './slack-stand-in.js';

export interface GatewayOnStandIn {
  slack: SlackStandIn;
  gateway: SlackGateway;
}

/**
 * The real Slack gateway on a real Web API client, talking to a fresh Slack stand-in; the
 * caller closes `slack`. Retries are off, so a refused call is seen at once.
 */
export async function gatewayOnStandIn(
  options: {
    ownBotId?: () => string;
    /** What the caller masks on the way out; nothing by default. */
    redact?: Redact;
  } = {},
): Promise<GatewayOnStandIn> {
  const slack = await startSlackStandIn();
  const client = new WebClient(BOT_TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  // What the caller logs of a refused call is not read here: the tests read Slack's side.
  const logger = createLogger({ level: 'error', secrets: [BOT_TOKEN], write: () => {} });
  const caller = createSlackCaller({ client, logger, redact: options.redact ?? ((text) => text) });
  const gateway = createSlackGateway({
    caller,
    ...(options.ownBotId ? { ownBotId: options.ownBotId } : {}),
  });
  return { slack, gateway };
}

/**
 * The real outbox delivering through a gateway on the stand-in and logging to `logger`, as one
 * instance with a lease worked out from a 6 s agent time-out; not started.
 */
export function outboxOnStandIn(
  store: OutboxOptions['store'],
  { gateway, logger }: { gateway: SlackGateway; logger: Logger },
): Outbox {
  return createOutbox({
    store,
    instanceId: 'i-test',
    lease: leasesFor(6_000).delivery,
    slack: gateway,
    logger,
    hints: HINTS,
  });
}
