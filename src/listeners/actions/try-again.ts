import type { AllMiddlewareArgs, SlackActionMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { refusalText, text } from '../../blocks/messages.js';
import { clickersTeam, clickSchema } from '../../slack/interactions.js';
import type { Mrkdwn } from '../../slack/mrkdwn.js';
import { runRecorded } from '../background.js';
import type { ListenerDeps } from '../types.js';

const retryClickSchema = clickSchema.extend({
  // Only the value matters, and only as a job id to read back from the store.
  actions: z.array(z.object({ value: z.string().regex(/^\d{1,15}$/) })).min(1),
});

/**
 * "Try again" on a status card: the retry is recorded before the click is acknowledged (if the
 * person may instruct the agent where the job was asked), then started in the background like
 * any job. A double click or a re-delivery finds the retry already recorded and does nothing more.
 */
export function tryAgain(deps: Pick<ListenerDeps, 'jobs' | 'logger' | 'slack' | 'tasks'>) {
  return async ({ body, ack }: SlackActionMiddlewareArgs & AllMiddlewareArgs) => {
    const parsed = retryClickSchema.safeParse(body);
    if (!parsed.success) {
      await ack();
      deps.logger.warn('"Try again" click not understood', {
        issues: parsed.error.issues.map((i) => i.path.join('.')),
      });
      return;
    }
    const click = parsed.data;
    const userId = click.user.id;
    const teamId = clickersTeam(click) ?? '';
    const channelId = click.channel.id;
    const responseUrl = click.response_url ?? null;
    /** A private answer to the person who clicked: a courtesy, left out when no slot is free. */
    const tell = (words: Mrkdwn) =>
      deps.tasks.run('answer a "Try again" click', () =>
        responseUrl
          ? deps.slack.respond(responseUrl, words)
          : deps.slack.postEphemeral({ channel: channelId, user: userId, text: words }),
      );

    let outcome: Awaited<ReturnType<typeof deps.jobs.acceptRetry>>;
    try {
      outcome = await deps.jobs.acceptRetry({
        jobId: Number(click.actions[0]?.value),
        userId,
        teamId,
        channelId,
        responseUrl,
      });
    } catch (error) {
      deps.logger.error('could not record a retry', { error });
      await ack();
      tell(text.notRecorded());
      return;
    }
    // Acknowledged only once recorded: a crash before this leaves Slack showing the click failed.
    await ack();
    if (outcome === 'not_retryable') tell(text.notRetryable());
    else if (outcome !== 'repeat' && 'refused' in outcome) tell(refusalText(outcome.refused));
    else if (outcome !== 'repeat') {
      const id = outcome.job;
      runRecorded(deps, 'start job', () => deps.jobs.startJob(id), { jobId: id });
    }
  };
}
