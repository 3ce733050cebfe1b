import type { AllMiddlewareArgs, SlackViewMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { channelAllowed } from '../../access/access-policy.js';
import type { Config } from '../../config/config.js';
import { failedFields } from '../../http/not-recorded.js';
import { type JobService, type RecordedWorkDeps, runRecorded } from '../../jobs/job-service.js';
import type { Logger } from '../../logging/logger.js';
import type { UserNames } from '../../slack/directory.js';
import type { SlackGateway } from '../../slack/gateway.js';
import { type ConversationFacts, isDirectMessage, isUserId, userIdSchema } from '../../slack/ids.js';
import { escapeMrkdwn } from '../../slack/mrkdwn.js';
import { withTimeout } from '../../util/loop.js';
import { BLOCK, INPUT_ACTION, type ModalMetadata, modalText as say } from './modal.js';
import { recordShortcut, type ShortcutRecordDeps } from './record.js';

/**
 * What a submission takes: the settings it checks the inputs against, Slack's word on the channel
 * and the author's name, and the job service that records and starts the job.
 */
export interface SubmissionDeps extends RecordedWorkDeps, ShortcutRecordDeps {
  config: Pick<Config, 'maxPromptChars' | 'access' | 'threadContextMaxChars'>;
  slack: Pick<SlackGateway, 'conversationFacts'>;
  names: Pick<UserNames, 'of'>;
  logger: Logger;
  jobs: Pick<JobService, 'recordJob' | 'startJob' | 'handBack'>;
}

/**
 * How long the submission waits for Slack to say whether the bot is in the chosen channel, and
 * for the message author's name: Slack wants the answer within 3 seconds.
 */
const MEMBERSHIP_CHECK_MS = 1_000;
const NAME_LOOKUP_MS = 700;

const metadataSchema = z.object({
  channel: z.string().min(1),
  ts: z.string().min(1),
  threadTs: z.string().optional(),
  author: z.string().min(1),
  permalink: z.string().optional(),
  files: z.array(z.object({ name: z.string(), type: z.string() })).optional(),
});

const submissionSchema = z.object({
  team: z.object({ id: z.string() }).nullable().optional(),
  user: z.object({ id: userIdSchema, team_id: z.string().optional() }),
  view: z.object({
    id: z.string().min(1),
    private_metadata: z.string(),
    state: z.object({
      values: z.record(
        z.string(),
        z.record(
          z.string(),
          z.object({
            value: z.string().nullable().optional(),
            selected_conversation: z.string().nullable().optional(),
          }),
        ),
      ),
    }),
  }),
});

type Errors = Partial<Record<(typeof BLOCK)[keyof typeof BLOCK], string>>;

/** Whether the bot is in the channel; undefined when Slack cannot say in time (then the job's own post decides). */
const facts = (
  deps: Pick<SubmissionDeps, 'slack'>,
  channel: string,
): Promise<ConversationFacts | 'missing' | undefined> =>
  withTimeout(
    deps.slack
      .conversationFacts(channel)
      .catch((error: { code?: string }) =>
        error?.code === 'channel_not_found' ? ('missing' as const) : undefined,
      ),
    MEMBERSHIP_CHECK_MS,
  );

/** The message author's name for the agent, if Slack gives it in time; the id otherwise. */
async function authorName(deps: Pick<SubmissionDeps, 'names'>, author: string): Promise<string> {
  if (!isUserId(author)) return author;
  const names = await withTimeout(deps.names.of([author]), NAME_LOOKUP_MS);
  return names?.get(author) ?? author;
}

/**
 * What is wrong with the modal's inputs, answered inside it; with Slack's word on the channel
 * when it was asked (and answered in time).
 */
async function inputErrors(
  deps: Pick<SubmissionDeps, 'config' | 'slack'>,
  instruction: string,
  channel: string,
): Promise<{ errors: Errors; known: Awaited<ReturnType<typeof facts>> }> {
  const errors: Errors = {};
  let known: Awaited<ReturnType<typeof facts>>;
  // Modal inputs arrive as typed (events and commands arrive Slack-encoded): the length is the text's own.
  const length = instruction.length;
  if (!instruction) errors.instruction = say.noInstruction();
  else if (length > deps.config.maxPromptChars)
    errors.instruction = say.tooLong(length, deps.config.maxPromptChars);
  if (!channel) errors.channel = say.noChannel();
  else if (isDirectMessage(channel)) errors.channel = say.direct();
  else if (!channelAllowed(deps.config.access, channel)) errors.channel = say.channelNotAllowed();
  else {
    known = await facts(deps, channel);
    if (known === 'missing') errors.channel = say.channelMissing();
    else if (known?.isArchived) errors.channel = say.archived();
    else if (known && !known.isMember) errors.channel = say.notMember();
  }
  return { errors, known };
}

/**
 * The modal submitted: checks what can be checked at once and answers problems inside the modal;
 * otherwise records the job and closes it.
 */
export function sendToDocsAgentSubmission(deps: SubmissionDeps) {
  return async ({ ack, body }: SlackViewMiddlewareArgs & AllMiddlewareArgs) => {
    const parsed = submissionSchema.safeParse(body);
    let metadata: ModalMetadata | undefined;
    let problem: z.ZodError | undefined = parsed.error;
    try {
      const read = parsed.success
        ? metadataSchema.safeParse(JSON.parse(parsed.data.view.private_metadata))
        : undefined;
      metadata = read?.data;
      problem ??= read?.error;
    } catch {
      metadata = undefined;
    }
    if (!parsed.success || !metadata) {
      // Which fields failed, never their values (what the person typed).
      deps.logger.warn('modal submission not understood', {
        fields: problem ? failedFields(problem) : ['view.private_metadata: invalid_json'],
      });
      await ack({ response_action: 'errors', errors: { [BLOCK.instruction]: say.notUnderstood() } });
      return;
    }
    const { view, user } = parsed.data;
    const value = (block: string) => view.state.values[block]?.[INPUT_ACTION];
    const instruction = (value(BLOCK.instruction)?.value ?? '').trim();
    const messageText = value(BLOCK.message)?.value ?? '';
    const channel = value(BLOCK.channel)?.selected_conversation ?? '';

    const { errors, known } = await inputErrors(deps, instruction, channel);
    if (Object.keys(errors).length > 0) {
      await ack({ response_action: 'errors', errors });
      return;
    }

    let accepted: Awaited<ReturnType<typeof recordShortcut>>;
    try {
      const author = await authorName(deps, metadata.author);
      accepted = await recordShortcut(deps, {
        teamId: user.team_id ?? parsed.data.team?.id ?? '',
        userId: user.id,
        channelId: channel,
        // Recorded Slack-encoded, like every other instruction, so one rule renders them all.
        instruction: escapeMrkdwn(instruction),
        message: {
          channelId: metadata.channel,
          ts: metadata.ts,
          threadTs: metadata.threadTs,
          text: escapeMrkdwn(messageText),
          author,
          files: metadata.files ?? [],
        },
        permalink: metadata.permalink,
        viewId: view.id,
        // Slack's answer above; when it gave none in time, not asked again before answering.
        audience: typeof known !== 'object' ? 'unknown' : known.isPrivate ? 'private' : 'public',
      });
    } catch (error) {
      deps.logger.error('could not record a shortcut submission', { error });
      await ack({ response_action: 'errors', errors: { [BLOCK.instruction]: say.notRecorded() } });
      return;
    }
    if (accepted === 'thread_taken') {
      await ack({ response_action: 'errors', errors: { [BLOCK.channel]: say.threadHasJob() } });
      return;
    }
    await ack();
    if (typeof accepted === 'object') {
      const id = accepted.job;
      runRecorded(deps, 'start job', () => deps.jobs.startJob(id), { jobId: id });
    }
  };
}
