import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { AccessPolicy } from '../../access/access-policy.js';
import { type RenderHints, text } from '../../blocks/messages.js';
import { refusalText } from '../../blocks/refusal-texts.js';
import { type JobService, type RecordedWorkDeps, runRecorded } from '../../jobs/job-service.js';
import { type Logger, type Redact, redactDeep } from '../../logging/logger.js';
import { isDirectConversation, privateByChannelName, userIdSchema } from '../../slack/ids.js';
import { withTimeout } from '../../util/loop.js';
import { type CommandRecordDeps, recordCommand } from './record.js';
import { type Answer, type AnswerDeps, parseCommandText } from './subcommands.js';
import { commandText, usage } from './wording.js';

/** The slash command payload, parsed at the edge. */
export const commandSchema = z.object({
  text: z.string().default(''),
  user_id: userIdSchema,
  channel_id: z.string().min(1),
  team_id: z.string().min(1),
  team_domain: z.string().optional(),
  trigger_id: z.string().min(1),
  response_url: z.string().url().optional(),
  channel_name: z.string().optional(),
});
export type Command = z.infer<typeof commandSchema>;

export type Ack = SlackCommandMiddlewareArgs['ack'];

/** What the command takes: what its subcommands read, and what starting a job takes. */
export type CommandDeps = ReportDeps & InstructionDeps & { hints: RenderHints };

/** `/docs-agent …`: help, a subcommand, or an instruction, each acknowledged within Slack's 3 s. */
export function docsAgentCommand(deps: CommandDeps) {
  return async ({ command, ack }: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
    const parsed = commandSchema.safeParse(command);
    if (!parsed.success) {
      deps.logger.warn('slash command payload not understood', {
        issues: parsed.error.issues.map((i) => i.path.join('.')),
      });
      await ack({ response_type: 'ephemeral', text: commandText.notUnderstood() });
      return;
    }
    const body = parsed.data;
    const asked = parseCommandText(body.text);
    switch (asked.kind) {
      case 'help':
        await ack({ response_type: 'ephemeral', text: usage(deps.hints) });
        return;
      case 'unknown_subcommand':
        await ack({
          response_type: 'ephemeral',
          text: commandText.unknownSubcommand(asked.word, usage(deps.hints)),
        });
        return;
      case 'subcommand':
        await answerReport(deps, body, asked, ack);
        return;
      case 'instruction':
        await acceptInstruction(deps, body, asked.text, ack);
        return;
    }
  };
}

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
