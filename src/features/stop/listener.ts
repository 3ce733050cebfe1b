import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { type NotRecordedDeps, notRecorded } from '../../http/not-recorded.js';
import { userIdSchema } from '../../slack/ids.js';
import { recordStop, type StopDeps, stopText } from './record.js';

/** `agent_session_stopped` as Slack documents it; `streaming_message_ts` is not used (no streams). */
const stoppedSchema = z.looseObject({
  channel: z.string().min(1),
  user: userIdSchema,
  thread_ts: z.string().min(1),
  event_ts: z.string().min(1),
});

/**
 * Someone pressed stop on a job's agent session. What waits is withdrawn and the session leaves
 * `processing`, recorded before Slack is answered; its recording decides who may stop it.
 */
export function agentSessionStopped(deps: StopDeps & NotRecordedDeps) {
  return async ({
    event,
    context,
    body,
  }: SlackEventMiddlewareArgs<'agent_session_stopped'> & AllMiddlewareArgs) => {
    const parsed = stoppedSchema.safeParse(event);
    if (!parsed.success) {
      deps.logger.warn('agent_session_stopped event not understood', {
        fields: parsed.error.issues.map((i) => i.path.join('.')),
      });
      return;
    }
    const { channel, user, thread_ts: threadTs, event_ts: eventTs } = parsed.data;
    const teamId = typeof body.team_id === 'string' ? body.team_id : context.teamId;
    try {
      const outcome = await recordStop(deps, {
        channelId: channel,
        threadTs,
        userId: user,
        teamId,
        eventTs,
      });
      deps.logger.info('stop pressed', { channel, threadTs, outcome });
    } catch (error) {
      notRecorded(deps, error, context, { channel, user, threadTs }, stopText.notRecorded());
    }
  };
}
