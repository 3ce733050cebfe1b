import { HOUR_MS } from '../../access/access-policy.js';
import { jobListMessage, LIST_LIMIT } from '../../blocks/job-list.js';
import { refusalText, text } from '../../blocks/messages.js';
import { statusReport } from '../../blocks/status-report.js';
import { servedProjects } from '../../config/projects.js';
import type { CommandText } from '../../jobs/command-text.js';
import { redactDeep } from '../../logging/logger.js';
import { withTimeout } from '../../util/waits.js';
import type { ListenerDeps } from '../types.js';
import type { Ack, Command } from './command-payload.js';

/** What the reports read: the access check, the store's views, and what the answers are built with. */
export type ReportDeps = Pick<
  ListenerDeps,
  'access' | 'config' | 'health' | 'hints' | 'identity' | 'logger' | 'redact' | 'store'
>;

/** How long a report waits for the access check (users.info) before answering that it cannot tell. */
const REPORT_ACCESS_CHECK_MS = 1_500;

/** `/docs-agent list` and `list channel`: recent jobs with links to their threads and PRs. */
async function listReply(
  deps: Pick<ListenerDeps, 'hints' | 'identity' | 'store'>,
  body: Command,
  scope: 'mine' | 'channel',
) {
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

async function statusReply(deps: Pick<ListenerDeps, 'config' | 'health' | 'store'>) {
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

type ReportRequest = Extract<CommandText, { kind: 'list' | 'status' }>;

/** `/docs-agent list` or `status`: for people who may use the bot, answered in the acknowledgement. */
export async function answerReport(deps: ReportDeps, body: Command, asked: ReportRequest, ack: Ack) {
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
