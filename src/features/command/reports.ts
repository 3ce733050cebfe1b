import type { AccessPolicy } from '../../access/access-policy.js';
import { refusalText } from '../../blocks/refusal-texts.js';
import { type Logger, type Redact, redactDeep } from '../../logging/logger.js';
import { withTimeout } from '../../util/loop.js';
import type { Ack, Command } from './payload.js';
import type { Answer, AnswerDeps } from './subcommands.js';
import { commandText } from './wording.js';

/** What answering a subcommand takes: the access check, what the answers read, the logs' redaction. */
export interface ReportDeps extends AnswerDeps {
  access: Pick<AccessPolicy, 'check'>;
  logger: Logger;
  /** The logs' redaction, for answers built here; the gateway masks what it sends itself. */
  redact: Redact;
}

/** How long a report waits for the access check (users.info) before answering that it cannot tell. */
const REPORT_ACCESS_CHECK_MS = 1_500;

/** A read-only subcommand (`list`, `status`, …): for people who may use the bot, answered in the acknowledgement. */
export async function answerReport(
  deps: ReportDeps,
  body: Command,
  asked: { name: string; answer: Answer },
  ack: Ack,
) {
  // Reports show jobs and quota: only for people who may use the bot, and fail closed
  // when Slack cannot say in time (Slack wants the answer within 3 seconds).
  const decision = await withTimeout(
    deps.access.check({ teamId: body.team_id, channelId: body.channel_id, userId: body.user_id }),
    REPORT_ACCESS_CHECK_MS,
  ).catch(() => undefined);
  if (!decision?.allowed) {
    await ack({ response_type: 'ephemeral', text: refusalText(decision ?? { reason: 'unverified' }) });
    return;
  }
  try {
    const reply = await asked.answer(deps, body);
    // Reports show what the agent API said of each job: masked as everything the bot shows.
    await ack({ response_type: 'ephemeral', ...redactDeep(reply, deps.redact) });
  } catch (error) {
    deps.logger.error('could not read the store for a report', { error, kind: asked.name });
    await ack({ response_type: 'ephemeral', text: commandText.reportUnavailable() });
  }
}
