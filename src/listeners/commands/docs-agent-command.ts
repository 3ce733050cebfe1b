import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { HOUR_MS } from '../../access/access-policy.js';
import { jobListMessage, LIST_LIMIT } from '../../blocks/job-list.js';
import { refusalText, text, usage } from '../../blocks/messages.js';
import { statusReport } from '../../blocks/status-report.js';
import { servedProjects } from '../../config/projects.js';
import { type CommandText, parseCommandText } from '../../jobs/command-text.js';
import { isDirectConversation, privateByChannelName } from '../../slack/conversations.js';
import { md } from '../../slack/mrkdwn.js';
import { redactDeep } from '../../slack/redaction.js';
import { withTimeout } from '../../util/timeout.js';
import { runRecorded } from '../background.js';
import type { ListenerDeps } from '../types.js';

const commandSchema = z.object({
  text: z.string().default(''),
  user_id: z.string().min(1),
  channel_id: z.string().min(1),
  team_id: z.string().min(1),
  team_domain: z.string().optional(),
  trigger_id: z.string().min(1),
  response_url: z.string().url().optional(),
  channel_name: z.string().optional(),
});
type Command = z.infer<typeof commandSchema>;

/** How long a report waits for the access check (users.info) before answering that it cannot tell. */
const REPORT_ACCESS_CHECK_MS = 1_500;

/** `/docs-agent list` and `list channel`: recent jobs with links to their threads and PRs. */
async function listReply(deps: ListenerDeps, body: Command, scope: 'mine' | 'channel') {
  const jobs = await deps.store.recentJobs(
    scope === 'mine' ? { requesterId: body.user_id } : { channelId: body.channel_id },
    LIST_LIMIT,
  );
  const workspaceUrl =
    deps.identity.peek()?.url ?? (body.team_domain ? `https://${body.team_domain}.slack.com/` : undefined);
  return jobListMessage(
    jobs,
    scope === 'mine' ? { kind: 'mine' } : { kind: 'channel', channelId: body.channel_id },
    {
      workspaceUrl,
      now: Date.now(),
      prLinkHosts: deps.hints.prLinkHosts,
      // Shown only to the person who asked, in the conversation they asked in.
      viewer: { userId: body.user_id, channelId: body.channel_id },
    },
  );
}

async function statusReply(deps: ListenerDeps) {
  const now = Date.now();
  const [used, activeJobs, instances, feedback] = await Promise.all([
    deps.store.instructionsSince(now - HOUR_MS),
    deps.store.countActiveJobs(),
    deps.store.shared ? deps.store.liveInstances(deps.config.instanceTimeoutMs) : Promise.resolve(1),
    deps.store.feedbackTotals(),
  ]);
  return statusReport({
    projects: servedProjects(deps.config),
    defaultProject: deps.config.agent.projectId,
    used,
    activeJobs,
    pollerRunning: deps.health.pollerRunning(),
    lastAgentSuccessAt: deps.health.lastAgentSuccessAt(),
    startedAt: deps.health.startedAt,
    instances: Math.max(1, instances),
    feedback,
    now,
  });
}

type Ack = SlackCommandMiddlewareArgs['ack'];
type ReportRequest = Extract<CommandText, { kind: 'list' | 'status' }>;

/** `/docs-agent list` or `status`: for people who may use the bot, answered in the acknowledgement. */
async function answerReport(deps: ListenerDeps, body: Command, asked: ReportRequest, ack: Ack) {
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
    const reply = asked.kind === 'list' ? await listReply(deps, body, asked.scope) : await statusReply(deps);
    // Reports show what the agent API said of each job: masked as everything the bot shows.
    await ack({ response_type: 'ephemeral', ...redactDeep(reply, deps.redact) });
  } catch (error) {
    deps.logger.error('could not read the store for a report', { error, kind: asked.kind });
    await ack({ response_type: 'ephemeral', text: text.reportUnavailable() });
  }
}

/** `/docs-agent <instruction>`: recorded, acknowledged, then started in the background. */
async function acceptInstruction(deps: ListenerDeps, body: Command, instruction: string, ack: Ack) {
  // In a direct message the command cannot be followed by its thread (and in a DM between other
  // people the bot cannot post at all): a direct message to the bot itself starts a job instead.
  if (isDirectConversation(body.channel_id, body.channel_name)) {
    await ack({ response_type: 'ephemeral', text: text.directMessage() });
    return;
  }
  // Recorded before the acknowledgement: once Slack shows the command as sent, a crash cannot
  // lose it (the next start carries on or explains).
  let jobId: number | undefined;
  try {
    jobId = await deps.jobs.acceptCommand({
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

/** `/docs-agent …`: help, a report, or an instruction, each acknowledged within Slack's 3 s. */
export function docsAgentCommand(deps: ListenerDeps) {
  return async ({ command, ack }: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
    const parsed = commandSchema.safeParse(command);
    if (!parsed.success) {
      deps.logger.warn('slash command payload not understood', {
        issues: parsed.error.issues.map((i) => i.path.join('.')),
      });
      await ack({
        response_type: 'ephemeral',
        text: md`:warning: I could not read that command. Please try again.`,
      });
      return;
    }
    const body = parsed.data;
    const parsedText = parseCommandText(body.text);
    switch (parsedText.kind) {
      case 'help':
        await ack({ response_type: 'ephemeral', text: usage(deps.hints) });
        return;
      case 'unknown_subcommand':
        await ack({
          response_type: 'ephemeral',
          text: text.unknownSubcommand(parsedText.word, usage(deps.hints)),
        });
        return;
      case 'list':
      case 'status':
        await answerReport(deps, body, parsedText, ack);
        return;
      case 'instruction':
        await acceptInstruction(deps, body, parsedText.text, ack);
        return;
    }
  };
}
