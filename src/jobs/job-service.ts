import type { AccessPolicy } from '../access/access-policy.js';
import type { AgentClient } from '../agent/client.js';
import {
  AgentInvalidResponseError,
  AgentNotFoundError,
  AgentOutcomeUnknownError,
  AgentUnauthorizedError,
} from '../agent/errors.js';
import type { AgentJob } from '../agent/schema.js';
import type { Logger } from '../logger.js';
import { SlackCallError, type SlackGateway } from '../slack/gateway.js';
import { mrkdwnToPlain } from '../slack/mrkdwn.js';
import type { JobPatch, JobRecord, Orphans, RunOutcome, RunRecord, Store } from '../store/types.js';
import { agentErrorText, outcomeText, refusalText, rootText, text } from './messages.js';
import {
  type PrivateTarget,
  privateNote,
  receivedReaction,
  rootMetadata,
  rootUpdate,
  threadPost,
} from './outbox-items.js';

/** A `/docs-agent <instruction>` command, already validated by its listener. */
export interface StartRequest {
  teamId: string;
  channelId: string;
  userId: string;
  /** The instruction as typed (Slack mrkdwn). */
  text: string;
  /** Slack's trigger id: unique per invocation, so a repeat never starts a second job. */
  triggerId: string;
  responseUrl: string | null;
}

/** A human reply in some thread, already filtered by its listener. */
export interface ReplyRequest {
  /** The author's workspace (differs from ours in a shared channel). */
  teamId: string | undefined;
  channelId: string;
  threadTs: string;
  messageTs: string;
  userId: string;
  text: string;
}

/**
 * The job rules. Every instruction is first *accepted* (recorded in the store, fast, before
 * Slack is acknowledged), then *processed* in the background; a crash in between leaves a row
 * that {@link JobService.recover} picks up.
 */
export interface JobService {
  /** Records a command. Returns the new job's id, or undefined when it is a repeat. */
  acceptCommand(request: StartRequest): Promise<number | undefined>;
  /** Checks access, posts the root message and creates the job upstream. */
  startJob(jobId: number): Promise<void>;
  /** Records a reply in a job's thread. Returns the run's id, or undefined (no job, or a repeat). */
  acceptReply(request: ReplyRequest): Promise<number | undefined>;
  /** Checks access and sends a recorded reply to the agent (or explains why not). */
  processReply(runId: number, teamId?: string): Promise<void>;
  /**
   * Records the terminal outcome of the job's open runs and queues its post. `job` is the
   * snapshot the outcome was observed against; false when the job has moved on since.
   */
  finishRun(job: JobRecord, outcome: RunOutcome, agentJob?: AgentJob): Promise<boolean>;
  /** Tells the thread, once per run, that polling is refused (the admin key). */
  notePollRefused(job: JobRecord): Promise<void>;
  /**
   * Finishes or explains what a stopped process left half done (taken over with
   * {@link Store.adoptOrphans}).
   */
  recover(orphans: Orphans): Promise<void>;
}

export interface JobServiceDeps {
  store: Store;
  /** This process's instance id: owner of the instructions it accepts until they are sent. */
  instanceId: string;
  agent: AgentClient;
  slack: SlackGateway;
  access: AccessPolicy;
  logger: Logger;
  /** Longest instruction accepted, in characters of plain text. */
  maxPromptChars: number;
  /** First poll interval of a run, in milliseconds. */
  pollIntervalMs: number;
  /** Maximum age of a run before the poller stops watching it, in milliseconds. */
  maxAgeMs: number;
  /** Wakes the outbox after something was queued. */
  onEnqueued: () => void;
  /** Wakes the poller after a run started. */
  onRunStarted: () => void;
  now?: () => number;
}

/** Job fields taken from an agent job record. */
function fromAgentJob(agentJob: AgentJob): JobPatch {
  return {
    agentStatus: agentJob.status,
    ...(agentJob.prLink ? { prLink: agentJob.prLink } : {}),
    ...(agentJob.source?.repository ? { repository: agentJob.source.repository } : {}),
    ...(agentJob.source?.ref ? { ref: agentJob.source.ref } : {}),
    ...(agentJob.model ? { model: agentJob.model } : {}),
  };
}

/** Which outcome a terminal agent job means. */
export function outcomeOf(agentJob: AgentJob): RunOutcome | undefined {
  switch (agentJob.status) {
    case 'completed':
      return agentJob.prLink ? 'completed_pr' : 'completed_no_changes';
    case 'failed':
      return 'failed';
    case 'archived':
      return 'archived';
    default:
      return undefined;
  }
}

const isUnknownOutcome = (error: unknown) =>
  error instanceof AgentOutcomeUnknownError || error instanceof AgentInvalidResponseError;
const message = (error: unknown) => String((error as Error)?.message ?? error);

export function createJobService(deps: JobServiceDeps): JobService {
  const { store, agent, slack, logger } = deps;
  const now = deps.now ?? Date.now;

  const logAgentError = (error: unknown, fields: Record<string, unknown>) => {
    if (error instanceof AgentUnauthorizedError) {
      logger.error('agent API refused the admin key: renew DOCS_AGENT_API_KEY', { ...fields, error });
    } else {
      logger.warn('agent API call failed', { ...fields, error });
    }
  };

  /** Checks length and access; returns the refusal to give, if any. */
  async function refusal(
    prompt: string,
    who: { teamId: string | undefined; channelId: string; userId: string },
  ) {
    if (prompt.length > deps.maxPromptChars) return text.promptTooLong(prompt.length, deps.maxPromptChars);
    const decision = await deps.access.check(who);
    if (decision.allowed) return undefined;
    logger.info('instruction refused', { reason: decision.reason, user: who.userId, channel: who.channelId });
    return refusalText(decision);
  }

  const startedPatch = (agentJob: AgentJob, at: number): JobPatch => ({
    ...fromAgentJob(agentJob),
    phase: 'active',
    lastOutcome: null,
    runStartedAt: at,
    nextPollAt: at + deps.pollIntervalMs,
    pollIntervalMs: deps.pollIntervalMs,
    pollFailures: 0,
    lastError: null,
  });

  /** Marks a run refused or failed before it was sent, and tells its author privately. */
  async function dropRun(job: JobRecord, run: RunRecord, reason: string, note: string, to: PrivateTarget) {
    await store.apply(
      {
        jobId: job.id,
        run: { id: run.id, patch: { state: 'failed', error: reason } },
        enqueue: [privateNote(job.id, `dropped:${run.id}`, to, note)],
      },
      now(),
    );
    deps.onEnqueued();
  }

  async function sendFollowUp(job: JobRecord, run: RunRecord): Promise<void> {
    const agentJobId = job.agentJobId;
    if (!agentJobId) return;
    // Claimed atomically: a reply can be dispatched by its own task and by the flush after create.
    if (!(await store.claimRun(run.id, now()))) return;
    try {
      const agentJob = await agent.sendMessage(agentJobId, run.prompt);
      const at = now();
      const patch = startedPatch(agentJob, at);
      await store.apply(
        {
          jobId: job.id,
          job: patch,
          run: { id: run.id, patch: { state: 'sent', sentAt: at } },
          incrementRunCount: true,
          enqueue: [...receivedReaction(job, run), ...rootUpdate({ ...job, ...patch })],
        },
        at,
      );
      logger.info('follow-up sent', { jobId: job.id, agentJobId, run: run.seq });
      deps.onRunStarted();
    } catch (error) {
      logAgentError(error, { jobId: job.id, agentJobId, op: 'follow-up' });
      const gone = error instanceof AgentNotFoundError;
      const note = `<@${run.authorId}> ${agentErrorText(error, 'follow-up')}`;
      await store.apply(
        {
          jobId: job.id,
          ...(gone ? { job: { phase: 'gone' as const, nextPollAt: null } } : {}),
          run: {
            id: run.id,
            patch: { state: isUnknownOutcome(error) ? 'unknown' : 'failed', error: message(error) },
          },
          enqueue: [
            threadPost(job, `followup-error:${run.id}`, note, 'notice', run),
            ...(gone ? rootUpdate({ ...job, phase: 'gone' }) : []),
          ],
        },
        now(),
      );
    }
    deps.onEnqueued();
  }

  /** Decides what to do with a recorded, checked follow-up given where its job stands. */
  async function dispatchReply(job: JobRecord, run: RunRecord): Promise<void> {
    switch (job.phase) {
      case 'accepted':
      case 'posting':
      case 'creating':
        // Kept pending; sent as soon as the create call answers.
        return;
      case 'active':
      case 'idle':
        return sendFollowUp(job, run);
      case 'not_started':
      case 'start_unknown':
      case 'gone': {
        const note = job.phase === 'gone' ? text.followUpJobGone() : text.followUpNoJob(job.phase);
        const to = {
          channelId: job.channelId,
          userId: run.authorId,
          threadTs: job.threadTs,
          responseUrl: null,
        };
        return dropRun(job, run, `job is ${job.phase}`, note, to);
      }
    }
  }

  /** Sends follow-ups that arrived while the job was being created. */
  async function flushPending(jobId: number): Promise<void> {
    for (const run of await store.pendingRuns(jobId)) {
      const job = await store.getJob(jobId);
      if (job) await dispatchReply(job, run);
    }
  }

  async function createUpstream(job: JobRecord, run: RunRecord): Promise<void> {
    try {
      const agentJob = await agent.createJob(run.prompt);
      const at = now();
      const patch = { ...startedPatch(agentJob, at), agentJobId: agentJob.id };
      await store.apply(
        {
          jobId: job.id,
          job: patch,
          run: { id: run.id, patch: { state: 'sent', sentAt: at } },
          incrementRunCount: true,
          enqueue: rootUpdate({ ...job, ...patch }),
        },
        at,
      );
      logger.info('job started', { jobId: job.id, agentJobId: agentJob.id, channel: job.channelId });
      deps.onRunStarted();
    } catch (error) {
      logAgentError(error, { jobId: job.id, op: 'create' });
      const phase = isUnknownOutcome(error) ? ('start_unknown' as const) : ('not_started' as const);
      await store.apply(
        {
          jobId: job.id,
          job: { phase, lastError: message(error) },
          run: {
            id: run.id,
            patch: { state: isUnknownOutcome(error) ? 'unknown' : 'failed', error: message(error) },
          },
          enqueue: [
            threadPost(
              job,
              'start-error',
              `<@${job.requesterId}> ${agentErrorText(error, 'job')}`,
              'notice',
              run,
            ),
            ...rootUpdate({ ...job, phase }),
          ],
        },
        now(),
      );
    }
    deps.onEnqueued();
    await flushPending(job.id);
  }

  async function postRoot(job: JobRecord, run: RunRecord): Promise<void> {
    let threadTs: string;
    try {
      threadTs = await slack.postMessage({
        channel: job.channelId,
        text: rootText(job),
        metadata: rootMetadata(job.id),
      });
    } catch (error) {
      const code = error instanceof SlackCallError ? error.code : 'unexpected_error';
      // An answer lost on the way back (time-out, 5xx) does not mean Slack refused the post.
      const found =
        error instanceof SlackCallError && !error.isPlatformError ? (await findRoot(job))?.ts : undefined;
      if (found) {
        await rootRecorded(job, run, found);
        return;
      }
      logger.warn('could not post the root message; job not started', { jobId: job.id, code });
      const note =
        code === 'not_in_channel' || code === 'channel_not_found'
          ? text.notInChannel(job.channelId)
          : text.cannotPost(code);
      await store.apply(
        {
          jobId: job.id,
          job: { phase: 'not_started', lastError: `root post failed: ${code}` },
          run: { id: run.id, patch: { state: 'failed', error: `root post failed: ${code}` } },
          enqueue: [privateNote(job.id, `start-refused:${job.id}`, requesterTarget(job), note)],
        },
        now(),
      );
      deps.onEnqueued();
      return;
    }
    await rootRecorded(job, run, threadTs);
  }

  /** Records the thread, then makes the create call. */
  async function rootRecorded(job: JobRecord, run: RunRecord, threadTs: string): Promise<void> {
    // Recorded before the create call: a crash from here on leaves a row the next start explains.
    await store.apply(
      {
        jobId: job.id,
        job: { threadTs, phase: 'creating' },
        run: { id: run.id, patch: { state: 'sending', sentAt: now() } },
      },
      now(),
    );
    await createUpstream({ ...job, threadTs, phase: 'creating' }, run);
  }

  /** The root message Slack holds for this job: `{ ts }` (undefined ts: none); undefined when Slack cannot say. */
  const findRoot = (job: JobRecord): Promise<{ ts: string | undefined } | undefined> =>
    slack
      .findInChannel({
        channel: job.channelId,
        oldest: Math.floor(job.createdAt / 1000) - 1,
        metadata: rootMetadata(job.id),
      })
      .then(
        (ts) => ({ ts }),
        () => undefined,
      );

  const requesterTarget = (job: JobRecord): PrivateTarget => ({
    channelId: job.channelId,
    userId: job.requesterId,
    threadTs: null,
    responseUrl: job.responseUrl,
  });

  const service: JobService = {
    async acceptCommand(request) {
      const { job, created } = await store.insertJob(
        {
          teamId: request.teamId,
          channelId: request.channelId,
          requesterId: request.userId,
          instruction: request.text.trim(),
          triggerKey: `command:${request.triggerId}`,
          responseUrl: request.responseUrl,
          pollIntervalMs: deps.pollIntervalMs,
          owner: deps.instanceId,
        },
        {
          kind: 'create',
          prompt: mrkdwnToPlain(request.text).trim(),
          authorId: request.userId,
          messageTs: null,
          owner: deps.instanceId,
        },
        now(),
      );
      if (!created) logger.info('repeated command ignored', { jobId: job.id });
      return created ? job.id : undefined;
    },

    async startJob(jobId) {
      const job = await store.getJob(jobId);
      const run = job && (await store.getRuns(job.id))[0];
      if (!job || !run || job.phase !== 'accepted') return;
      const refused = await refusal(run.prompt, {
        teamId: job.teamId,
        channelId: job.channelId,
        userId: job.requesterId,
      });
      if (refused) {
        await store.apply(
          {
            jobId: job.id,
            job: { phase: 'not_started', lastError: 'refused' },
            run: { id: run.id, patch: { state: 'failed', error: 'refused' } },
            enqueue: [privateNote(job.id, `refused:${job.id}`, requesterTarget(job), refused)],
          },
          now(),
        );
        deps.onEnqueued();
        return;
      }
      // Only one caller (the command's task or recovery) may go on.
      if (!(await store.transitionJob(job.id, 'accepted', 'posting', now()))) return;
      await postRoot({ ...job, phase: 'posting' }, run);
    },

    async acceptReply(request) {
      const job = await store.findJobByThread(request.channelId, request.threadTs);
      if (!job) return undefined;
      const { run, created } = await store.insertFollowUp(
        job.id,
        {
          kind: 'follow_up',
          prompt: mrkdwnToPlain(request.text).trim(),
          authorId: request.userId,
          messageTs: request.messageTs,
          owner: deps.instanceId,
        },
        now(),
      );
      if (!created) logger.info('repeated reply ignored', { jobId: job.id, messageTs: request.messageTs });
      return created ? run.id : undefined;
    },

    async processReply(runId, teamId) {
      const run = await store.getRun(runId);
      const job = run && (await store.getJob(run.jobId));
      if (!run || !job || run.state !== 'pending') return;
      const to = {
        channelId: job.channelId,
        userId: run.authorId,
        threadTs: job.threadTs,
        responseUrl: null,
      };
      if (!run.prompt) return dropRun(job, run, 'empty', text.emptyFollowUp(), to);
      const refused = await refusal(run.prompt, {
        teamId: teamId ?? job.teamId,
        channelId: job.channelId,
        userId: run.authorId,
      });
      if (refused) return dropRun(job, run, 'refused', refused, to);
      // Read again: the job may have started while access was checked.
      const current = await store.getJob(job.id);
      if (current) await dispatchReply(current, run);
    },

    async finishRun(job, outcome, agentJob) {
      // Every run the agent accepted and that has no outcome yet ends here: a follow-up sent
      // while the agent was still working merges into the same result.
      const open = (await store.getRuns(job.id)).filter((r) => r.state === 'sent' && r.outcome === null);
      const latest = open.at(-1);
      const at = now();
      const patch: JobPatch = {
        ...(agentJob ? fromAgentJob(agentJob) : {}),
        phase: outcome === 'gone' ? 'gone' : 'idle',
        lastOutcome: outcome,
        nextPollAt: null,
      };
      const updated = { ...job, ...patch };
      const notify = [...new Set([job.requesterId, ...open.map((r) => r.authorId)])];
      const applied = await store.apply(
        {
          jobId: job.id,
          expect: { phase: job.phase, runCount: job.runCount },
          job: patch,
          runs: open.map((r) => ({ id: r.id, patch: { outcome, outcomeAt: at } })),
          enqueue: [
            ...(latest
              ? [
                  threadPost(
                    updated,
                    `outcome:${latest.seq}`,
                    outcomeText(outcome, updated, notify, deps.maxAgeMs),
                    'outcome',
                    latest,
                    open,
                  ),
                ]
              : []),
            ...rootUpdate(updated),
          ],
        },
        at,
      );
      if (!applied) {
        logger.info('poll answer ignored: the job changed meanwhile', { jobId: job.id });
        return false;
      }
      logger.info('run finished', {
        jobId: job.id,
        agentJobId: job.agentJobId,
        runs: open.map((r) => r.seq),
        outcome,
      });
      deps.onEnqueued();
      return true;
    },

    async notePollRefused(job) {
      await store.enqueue(
        [threadPost(job, `poll-refused:${job.runCount}`, text.pollRefused(job.requesterId), 'notice')],
        now(),
      );
      deps.onEnqueued();
    },

    async recover({ jobs, runs }) {
      for (const job of jobs) {
        logger.warn('job interrupted: the process starting it stopped', { jobId: job.id, phase: job.phase });
        // Applied only if the job is still where the stopped process left it.
        const expect = { phase: job.phase, runCount: job.runCount };
        const first = (await store.getRuns(job.id))[0];
        if (job.phase === 'accepted') {
          // Nothing was done for it yet: carry on as if the command had just arrived.
          await service.startJob(job.id);
        } else if (job.phase === 'posting') {
          // The create call was surely never made. If Slack has the root message, carry on from
          // it; if it surely does not, start over; if Slack cannot say, tell the requester.
          const found = await findRoot(job);
          if (found?.ts && first) {
            await rootRecorded(job, first, found.ts);
            continue;
          }
          if (found && first) {
            if (await store.transitionJob(job.id, 'posting', 'accepted', now()))
              await service.startJob(job.id);
            continue;
          }
          await store.apply(
            {
              jobId: job.id,
              expect,
              job: { phase: 'not_started', lastError: 'restarted while posting the root message' },
              ...(first
                ? { run: { id: first.id, patch: { state: 'failed' as const, error: 'restarted' } } }
                : {}),
              enqueue: [
                privateNote(
                  job.id,
                  `restart-refused:${job.id}`,
                  requesterTarget(job),
                  text.restartedBeforePost(),
                ),
              ],
            },
            now(),
          );
        } else {
          await store.apply(
            {
              jobId: job.id,
              expect,
              job: { phase: 'start_unknown', lastError: 'restarted while creating the job' },
              ...(first
                ? { run: { id: first.id, patch: { state: 'unknown' as const, error: 'restarted' } } }
                : {}),
              enqueue: [
                threadPost(
                  job,
                  'start-unknown',
                  text.restartedBeforeCreate(job.requesterId),
                  'notice',
                  first,
                ),
                ...rootUpdate({ ...job, phase: 'start_unknown' }),
              ],
            },
            now(),
          );
        }
        // Follow-ups that waited for this job to be created (other instances may hold them).
        await flushPending(job.id);
      }
      for (const run of runs) {
        const job = await store.getJob(run.jobId);
        if (!job) continue;
        if (run.state === 'sending') {
          await store.apply(
            {
              jobId: job.id,
              run: { id: run.id, patch: { state: 'unknown', error: 'restarted while sending' } },
              enqueue: [
                threadPost(
                  job,
                  `followup-unknown:${run.id}`,
                  text.followUpRestarted(run.authorId),
                  'notice',
                  run,
                ),
              ],
            },
            now(),
          );
        } else {
          // Recorded and never sent: safe to process now.
          await service.processReply(run.id);
        }
      }
      deps.onEnqueued();
    },
  };
  return service;
}
