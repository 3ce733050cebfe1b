import { text } from '../../blocks/messages.js';
import type { JobService } from '../../jobs/job-service.js';
import { type RecordedWorkDeps, runRecorded } from '../../jobs/job-service.js';
import { isDirectConversation, privateByChannelName } from '../../slack/ids.js';
import type { Ack, Command } from './payload.js';
import { type CommandRecordDeps, recordCommand } from './record.js';
import { commandText } from './wording.js';

/** What accepting a typed instruction needs: its recording, the job service, and a slot to start it in. */
export interface InstructionDeps extends RecordedWorkDeps, CommandRecordDeps {
  jobs: Pick<JobService, 'recordJob' | 'startJob' | 'handBack'>;
}

/** `/docs-agent <instruction>`: recorded, acknowledged, then started in the background. */
export async function acceptInstruction(deps: InstructionDeps, body: Command, instruction: string, ack: Ack) {
  // In a direct message the command cannot be followed by its thread (and in a DM between other
  // people the bot cannot post at all): a direct message to the bot itself starts a job instead.
  if (isDirectConversation(body.channel_id, body.channel_name)) {
    await ack({ response_type: 'ephemeral', text: commandText.directMessage() });
    return;
  }
  // Recorded before the acknowledgement: once Slack shows the command as sent, a crash cannot
  // lose it (the next start carries on or explains).
  let jobId: number | undefined;
  try {
    jobId = await recordCommand(deps, {
      teamId: body.team_id,
      channelId: body.channel_id,
      userId: body.user_id,
      text: instruction,
      triggerId: body.trigger_id,
      responseUrl: body.response_url ?? null,
      audience: privateByChannelName(body.channel_name),
    });
  } catch (error) {
    deps.logger.error('could not record a command', { error });
    await ack({ response_type: 'ephemeral', text: text.notRecorded() });
    return;
  }
  await ack();
  if (jobId !== undefined) {
    const id = jobId;
    runRecorded(deps, 'start job', () => deps.jobs.startJob(id), { jobId: id });
  }
}
