import type { AllMiddlewareArgs, SlackActionMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { type Block, section } from '../../slack/blocks.js';
import type { SlackGateway } from '../../slack/gateway.js';
import { clickersTeam, clickSchema } from '../../slack/ids.js';
import { joinMrkdwn, type Mrkdwn } from '../../slack/mrkdwn.js';
import type { TaskTracker } from '../../util/tasks.js';
import { parseFeedbackButtonValue, whatToFixButton } from './buttons.js';
import { recordVote, type VoteDeps } from './record.js';
import { feedbackText } from './wording.js';

/** A press of `feedback_buttons` as Slack sends it (a `block_actions` payload). */
const pressSchema = clickSchema.extend({
  actions: z.array(z.object({ type: z.literal('feedback_buttons'), value: z.string().max(2_000) })).min(1),
});

/**
 * Thumbs up or down under an outcome post: recorded once per person and outcome before the
 * press is acknowledged, and acknowledged privately to the person who pressed, a thumbs-down with
 * the offer to tell the agent what to fix (`what-to-fix.ts`). A press by
 * someone who may not instruct the agent where the job was asked records nothing, and they are
 * told why.
 */
export function outcomeFeedback(
  deps: VoteDeps & {
    slack: Pick<SlackGateway, 'respond' | 'postEphemeral'>;
    tasks: Pick<TaskTracker, 'run'>;
  },
) {
  return async ({ body, ack }: SlackActionMiddlewareArgs & AllMiddlewareArgs) => {
    const parsed = pressSchema.safeParse(body);
    const vote = parsed.success ? parseFeedbackButtonValue(parsed.data.actions[0]?.value ?? '') : undefined;
    if (!parsed.success || !vote) {
      await ack();
      deps.logger.warn('feedback press not understood', {
        issues: parsed.success ? ['actions.0.value'] : parsed.error.issues.map((i) => i.path.join('.')),
      });
      return;
    }
    const { user, channel, response_url: responseUrl } = parsed.data;
    /** A private answer: a courtesy, left out when no slot is free. */
    const tell = (words: Mrkdwn, blocks?: Block[]) =>
      deps.tasks.run('answer a feedback press', () =>
        responseUrl
          ? blocks
            ? deps.slack.respond(responseUrl, words, blocks)
            : deps.slack.respond(responseUrl, words)
          : deps.slack.postEphemeral({
              channel: channel.id,
              user: user.id,
              text: words,
              ...(blocks ? { blocks } : {}),
            }),
      );
    /** A thumbs-down's answer offers to say what to fix, which goes to the job as a follow-up. */
    const answer = (words: Mrkdwn) => {
      if (vote.value === 'positive') return tell(words);
      const offer = joinMrkdwn([words, feedbackText.offerWhatToFix()]);
      return tell(offer, [section(offer), whatToFixButton(vote)]);
    };
    try {
      const outcome = await recordVote(deps, {
        ...vote,
        userId: user.id,
        teamId: clickersTeam(parsed.data),
        channelId: channel.id,
      });
      await ack();
      if (outcome === 'recorded') answer(feedbackText.recorded(vote.value));
      else if (outcome === 'unchanged') answer(feedbackText.unchanged(vote.value));
      else if (outcome === 'unknown') tell(feedbackText.unknown());
      else tell(feedbackText.notCounted(outcome.refused.reason));
    } catch (error) {
      deps.logger.error('could not record feedback', { error });
      await ack();
      tell(feedbackText.notRecorded());
    }
  };
}
