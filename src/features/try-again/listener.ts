import type { AllMiddlewareArgs, SlackActionMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { text } from '../../blocks/messages.js';
import { refusalText } from '../../blocks/refusal-texts.js';
import type { JobService } from '../../jobs/job-service.js';
import type { Logger } from '../../logging/logger.js';
import type { SlackGateway } from '../../slack/gateway.js';
import { clickersTeam, clickSchema } from '../../slack/ids.js';
import { type Mrkdwn, md } from '../../slack/mrkdwn.js';
import type { TaskTracker } from '../../util/tasks.js';

const retryClickSchema = clickSchema.extend({
  // Only the value matters, and only as a job id to read back from the store.
  actions: z.array(z.object({ value: z.string().regex(/^\d{1,15}$/) })).min(1),
});

/**
 * What "Try again" works with: the job kernel records the retry (it inserts a job this instance
 * then starts, within the same checks and limits as any start) and starts it, or hands it back
 * when no background slot is free; the click is answered privately.
 */
export interface TryAgainDeps {
  jobs: Pick<JobService, 'acceptRetry' | 'startJob' | 'handBack'>;
  slack: Pick<SlackGateway, 'respond' | 'postEphemeral'>;
  tasks: Pick<TaskTracker, 'run'>;
  logger: Logger;
}

/**
 * "Try again" on a status card: the retry is recorded before the click is acknowledged (if the
 * person may instruct the agent where the job was asked), then started in the background like
 * any job. A double click or a re-delivery finds the retry already recorded and does nothing more.
 */
export function tryAgain(deps: TryAgainDeps) {
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
    if (outcome === 'not_retryable') tell(tryAgainText.notRetryable());
    else if (outcome !== 'repeat' && 'refused' in outcome) tell(refusalText(outcome.refused));
    else if (outcome !== 'repeat') {
      const id = outcome.job;
      // The job is recorded: with no background slot free it is left to the store, whose
      // take-over round starts it (as the listeners' runRecorded does).
      if (!deps.tasks.run('start job', () => deps.jobs.startJob(id)))
        void deps.jobs.handBack({ jobIds: [id] });
    }
  };
}

/** What the person who clicked "Try again" is told, privately, when it starts nothing of itself. */
export const tryAgainText = {
  notRetryable: () =>
    md`:information_source: This job cannot be tried again: it is no longer one whose start or latest run failed. Nothing was started.`,
};
