import type { AllMiddlewareArgs, SlackActionMiddlewareArgs, SlackViewMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { Config } from '../../config/config.js';
import { failedFields } from '../../http/not-recorded.js';
import { type JobService, type RecordedWorkDeps, runRecorded } from '../../jobs/job-service.js';
import { type Block, context, LIMITS, plain, section } from '../../slack/blocks.js';
import type { SlackGateway } from '../../slack/gateway.js';
import { clickersTeam, clickSchema, userIdSchema } from '../../slack/ids.js';
import { type OutcomeRef, parseOutcomeRef, WHAT_TO_FIX_ACTION_ID } from './buttons.js';
import { type ReasonDeps, recordReason } from './record.js';
import { whatToFixText as say } from './wording.js';

/** The "what to fix" modal: its callback id, and the block and action of its one input. */
export const WHAT_TO_FIX_CALLBACK_ID = 'feedback_what_to_fix_modal';
const BLOCK = 'what_to_fix';
const INPUT_ACTION = 'value';
/** Longest text the modal's input holds (Slack's limit for a plain text input). */
const INPUT_MAX = 3_000;

/** What the modal remembers between opening and submission: the outcome, and where it was posted. */
const metadataSchema = z.object({
  jobId: z.number().int().positive(),
  runSeq: z.number().int().positive(),
  channelId: z.string().min(1),
});

/** A press of "Tell the agent what to fix" (a `block_actions` payload from a private answer). */
const pressSchema = clickSchema.extend({
  trigger_id: z.string().min(1),
  actions: z
    .array(z.object({ action_id: z.literal(WHAT_TO_FIX_ACTION_ID), value: z.string().max(100) }))
    .min(1),
});

const submissionSchema = z.object({
  team: z.object({ id: z.string() }).nullable().optional(),
  user: z.object({ id: userIdSchema, team_id: z.string().optional() }),
  view: z.object({
    id: z.string().min(1),
    private_metadata: z.string().max(LIMITS.privateMetadata),
    state: z.object({
      values: z.record(
        z.string(),
        z.record(z.string(), z.object({ value: z.string().nullable().optional() })),
      ),
    }),
  }),
});

/** The modal: one text field, and what becomes of it. */
export function whatToFixModal(outcome: OutcomeRef & { channelId: string }, maxPromptChars: number) {
  return {
    type: 'modal',
    callback_id: WHAT_TO_FIX_CALLBACK_ID,
    title: plain(say.title, LIMITS.viewTitle),
    submit: plain('Send to the agent', LIMITS.viewTitle),
    close: plain('Cancel', LIMITS.viewTitle),
    private_metadata: JSON.stringify(metadataSchema.parse(outcome)),
    blocks: [
      {
        type: 'input',
        block_id: BLOCK,
        label: plain(say.label, LIMITS.inputLabel),
        element: {
          type: 'plain_text_input',
          action_id: INPUT_ACTION,
          multiline: true,
          max_length: Math.min(INPUT_MAX, maxPromptChars),
          placeholder: plain(say.placeholder, 150),
        },
      },
      context(say.explained()),
    ] satisfies Block[],
  };
}

/**
 * "Tell the agent what to fix" pressed: opens the modal at once (its trigger lasts 3 seconds).
 * Whether the person may say anything is checked when they submit it.
 */
export function openWhatToFix(deps: {
  slack: Pick<SlackGateway, 'openView'>;
  config: Pick<Config, 'maxPromptChars'>;
  logger: ReasonDeps['logger'];
}) {
  return async ({ body, ack }: SlackActionMiddlewareArgs & AllMiddlewareArgs) => {
    await ack();
    const parsed = pressSchema.safeParse(body);
    const outcome = parsed.success ? parseOutcomeRef(parsed.data.actions[0]?.value ?? '') : undefined;
    if (!parsed.success || !outcome) {
      deps.logger.warn('what-to-fix press not understood', {
        fields: parsed.success ? ['actions.0.value'] : failedFields(parsed.error),
      });
      return;
    }
    const view = whatToFixModal(
      { ...outcome, channelId: parsed.data.channel.id },
      deps.config.maxPromptChars,
    );
    await deps.slack.openView(parsed.data.trigger_id, view).catch((error: unknown) => {
      deps.logger.warn('could not open the what-to-fix modal', { error });
    });
  };
}

/** The modal's answer once the text went to the job: closes into a confirmation. */
const sentView = () => ({
  type: 'modal',
  title: plain(say.title, LIMITS.viewTitle),
  close: plain('Done', LIMITS.viewTitle),
  blocks: [section(say.sent())],
});

/** Reads the submission: the outcome it is about and the text, or undefined when it does not parse. */
function readSubmission(body: unknown) {
  const parsed = submissionSchema.safeParse(body);
  if (!parsed.success) return { problem: failedFields(parsed.error) };
  let metadata: z.infer<typeof metadataSchema> | undefined;
  try {
    metadata = metadataSchema.safeParse(JSON.parse(parsed.data.view.private_metadata)).data;
  } catch {
    metadata = undefined;
  }
  if (!metadata) return { problem: ['view.private_metadata'] };
  const reason = (parsed.data.view.state.values[BLOCK]?.[INPUT_ACTION]?.value ?? '').trim();
  return { submission: parsed.data, metadata, reason };
}

/**
 * The modal submitted: the text is checked at once (answered under the input), recorded with the
 * vote and as the job's follow-up before Slack is answered, then processed like a thread reply.
 */
export function whatToFixSubmission(
  deps: ReasonDeps &
    RecordedWorkDeps & {
      config: Pick<Config, 'maxPromptChars'>;
      jobs: Pick<JobService, 'acceptFollowUp' | 'processReply' | 'handBack'>;
    },
) {
  return async ({ ack, body }: SlackViewMiddlewareArgs & AllMiddlewareArgs) => {
    const read = readSubmission(body);
    const refuse = (error: string) => ack({ response_action: 'errors', errors: { [BLOCK]: error } });
    if (!('submission' in read)) {
      // Which fields failed, never their values (what the person typed).
      deps.logger.warn('what-to-fix submission not understood', { fields: read.problem });
      return refuse(say.notUnderstood());
    }
    const { submission, metadata, reason } = read;
    const max = deps.config.maxPromptChars;
    if (!reason) return refuse(say.empty());
    if (reason.length > max) return refuse(say.tooLong(reason.length, max));
    const teamId = clickersTeam(submission);
    let recorded: Awaited<ReturnType<typeof recordReason>>;
    try {
      recorded = await recordReason(deps, {
        ...metadata,
        userId: submission.user.id,
        teamId,
        reason,
        viewId: submission.view.id,
      });
    } catch (error) {
      deps.logger.error('could not record what to fix', { error });
      return refuse(say.notRecorded());
    }
    if (recorded === 'unknown') return refuse(say.unknown());
    if ('refused' in recorded) return refuse(say.notCounted(recorded.refused.reason));
    // The bot's blocks are loose records, checked against Slack's limits where they are built
    // (`slack/blocks.ts`), as the gateway hands views to Slack; Bolt's type names each block kind.
    await ack({ response_action: 'update', view: sentView() as never });
    const { runId } = recorded;
    if (runId !== undefined)
      runRecorded(deps, 'forward what to fix', () => deps.jobs.processReply(runId, teamId), { runId });
  };
}
