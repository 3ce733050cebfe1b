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
import type {
  JobPatch,
  JobRecord,
  NewOutboxItem,
  PostKind,
  RunOutcome,
  RunRecord,
  Store,
} from '../store/types.js';
import { agentErrorText, outcomeText, refusalText, rootText, text } from './messages.js';

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
  teamId: string | undefined;
  channelId: string;
  threadTs: string;
  messageTs: string;
  userId: string;
  text: string;
}

export interface JobService {
  startJob(request: StartRequest): Promise<void>;
  /** Forwards a reply to the thread's job. Replies in threads without a job are ignored. */
  handleReply(request: ReplyRequest): Promise<void>;
  /** Records the terminal outcome of the job's latest run and queues its post. */
  finishRun(job: JobRecord, outcome: RunOutcome, agentJob?: AgentJob): Promise<void>;
  /** Explains, after a restart, whatever a previous process left half done. */
  recover(): Promise<void>;
}

export interface JobServiceDeps {
  store: Store;
  access: AccessPolicy;
  /** Longest instruction accepted, in characters of plain text. */
  maxPromptChars: number;
  /** Per-person hourly instruction limit, for the refusal message. */
  maxInstructionsPerUserPerHour: number;
  agent: AgentClient;
  slack: SlackGateway;
  logger: Logger;
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

/** Emoji added to a follow-up once the agent accepted it. */
export const RECEIVED_REACTION = 'eyes';
/** Metadata event type of the bot's thread posts. */
export const POST_EVENT_TYPE = 'docs_agent_post';

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

export function createJobService(deps: JobServiceDeps): JobService {
  const { store, agent, slack, logger } = deps;
  const now = deps.now ?? Date.now;

  /** A thread post about one run: its outcome, or a notice that it did not (surely) reach the agent. */
  const post = (
    job: JobRecord,
    key: string,
    message: string,
    kind: PostKind,
    run?: RunRecord,
  ): NewOutboxItem => ({
    jobId: job.id,
    dedupeKey: `${key}:${job.id}`,
    payload: {
      type: 'post',
      channel: job.channelId,
      threadTs: job.threadTs ?? '',
      text: message,
      eventType: POST_EVENT_TYPE,
      about: { kind, run: run?.seq ?? null, source: run?.messageTs ?? null },
    },
  });
  const updateRoot = (job: JobRecord): NewOutboxItem[] =>
    job.threadTs
      ? [
          {
            jobId: job.id,
            dedupeKey: null,
            payload: { type: 'update_root', channel: job.channelId, ts: job.threadTs },
          },
        ]
      : [];

  /** Tells one person something privately; nothing else happens. */
  async function tellPrivately(
    dedupeKey: string,
    where: { channelId: string; userId: string; threadTs: string | null; responseUrl: string | null },
    message: string,
  ): Promise<void> {
    const payload = where.responseUrl
      ? ({ type: 'respond', responseUrl: where.responseUrl, text: message } as const)
      : ({
          type: 'ephemeral',
          channel: where.channelId,
          user: where.userId,
          threadTs: where.threadTs,
          text: message,
        } as const);
    await store.enqueue([{ jobId: null, dedupeKey, payload }], now());
    deps.onEnqueued();
  }

  /** Checks length and access; returns the refusal to give, if any. */
  async function refusal(
    prompt: string,
    who: { teamId: string | undefined; channelId: string; userId: string },
  ) {
    if (prompt.length > deps.maxPromptChars) return text.promptTooLong(prompt.length, deps.maxPromptChars);
    const decision = await deps.access.check(who);
    if (decision.allowed) return undefined;
    logger.info('instruction refused', { reason: decision.reason, user: who.userId, channel: who.channelId });
    return refusalText(decision, deps.maxInstructionsPerUserPerHour);
  }

  const logAgentError = (error: unknown, fields: Record<string, unknown>) => {
    if (error instanceof AgentUnauthorizedError) {
      logger.error('agent API refused the admin key: renew DOCS_AGENT_API_KEY', { ...fields, error });
    } else {
      logger.warn('agent API call failed', { ...fields, error });
    }
  };

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

  async function sendFollowUp(job: JobRecord, run: RunRecord): Promise<void> {
    const agentJobId = job.agentJobId;
    if (!agentJobId) return;
    // Claimed atomically: a reply can be dispatched both by its listener and by the flush after create.
    if (!(await store.claimRun(run.id, now()))) return;
    try {
      const agentJob = await agent.sendMessage(agentJobId, run.prompt);
      const at = now();
      const updated = { ...job, ...startedPatch(agentJob, at) };
      await store.apply(
        {
          jobId: job.id,
          job: startedPatch(agentJob, at),
          run: { id: run.id, patch: { state: 'sent', sentAt: at } },
          incrementRunCount: true,
          enqueue: [
            ...(run.messageTs
              ? [
                  {
                    jobId: job.id,
                    dedupeKey: `received:${run.id}`,
                    payload: {
                      type: 'reaction' as const,
                      channel: job.channelId,
                      ts: run.messageTs,
                      name: RECEIVED_REACTION,
                    },
                  },
                ]
              : []),
            ...updateRoot(updated),
          ],
        },
        at,
      );
      logger.info('follow-up sent', { jobId: job.id, agentJobId, run: run.seq });
      deps.onRunStarted();
    } catch (error) {
      logAgentError(error, { jobId: job.id, agentJobId, op: 'follow-up' });
      const unknown = error instanceof AgentOutcomeUnknownError || error instanceof AgentInvalidResponseError;
      const gone = error instanceof AgentNotFoundError;
      await store.apply(
        {
          jobId: job.id,
          ...(gone ? { job: { phase: 'gone' as const, nextPollAt: null } } : {}),
          run: {
            id: run.id,
            patch: { state: unknown ? 'unknown' : 'failed', error: String((error as Error).message) },
          },
          enqueue: [
            post(
              job,
              `followup-error:${run.id}`,
              `<@${run.authorId}> ${agentErrorText(error, 'follow-up')}`,
              'notice',
              run,
            ),
            ...(gone ? updateRoot(job) : []),
          ],
        },
        now(),
      );
    }
    deps.onEnqueued();
  }

  /** Sends follow-ups that arrived while the job was being created. */
  async function flushPending(jobId: number): Promise<void> {
    for (const run of await store.pendingRuns(jobId)) {
      const job = await store.getJob(jobId);
      if (!job) return;
      await dispatchReply(job, run);
    }
  }

  /** Decides what to do with a recorded follow-up given where its job stands. */
  async function dispatchReply(job: JobRecord, run: RunRecord): Promise<void> {
    switch (job.phase) {
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
        const message = job.phase === 'gone' ? text.followUpJobGone() : text.followUpNoJob(job.phase);
        await store.apply(
          {
            jobId: job.id,
            run: { id: run.id, patch: { state: 'failed', error: `job is ${job.phase}` } },
            enqueue: [
              {
                jobId: job.id,
                dedupeKey: `followup-refused:${run.id}`,
                payload: {
                  type: 'ephemeral',
                  channel: job.channelId,
                  user: run.authorId,
                  threadTs: job.threadTs,
                  text: message,
                },
              },
            ],
          },
          now(),
        );
        deps.onEnqueued();
        return;
      }
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
          enqueue: updateRoot({ ...job, ...patch }),
        },
        at,
      );
      logger.info('job started', { jobId: job.id, agentJobId: agentJob.id, channel: job.channelId });
      deps.onRunStarted();
    } catch (error) {
      logAgentError(error, { jobId: job.id, op: 'create' });
      const unknown = error instanceof AgentOutcomeUnknownError || error instanceof AgentInvalidResponseError;
      const phase = unknown ? ('start_unknown' as const) : ('not_started' as const);
      await store.apply(
        {
          jobId: job.id,
          job: { phase, lastError: String((error as Error).message) },
          run: {
            id: run.id,
            patch: { state: unknown ? 'unknown' : 'failed', error: String((error as Error).message) },
          },
          enqueue: [
            post(job, 'start-error', `<@${job.requesterId}> ${agentErrorText(error, 'job')}`, 'notice', run),
            ...updateRoot({ ...job, phase }),
          ],
        },
        now(),
      );
    }
    deps.onEnqueued();
    await flushPending(job.id);
  }

  return {
    async startJob(request) {
      const prompt = mrkdwnToPlain(request.text).trim();
      const refused = await refusal(prompt, request);
      if (refused) {
        await tellPrivately(
          `refused:${request.triggerId}`,
          {
            channelId: request.channelId,
            userId: request.userId,
            threadTs: null,
            responseUrl: request.responseUrl,
          },
          refused,
        );
        return;
      }
      const { job, run, created } = await store.insertJob(
        {
          teamId: request.teamId,
          channelId: request.channelId,
          requesterId: request.userId,
          instruction: request.text.trim(),
          triggerKey: `command:${request.triggerId}`,
          responseUrl: request.responseUrl,
          pollIntervalMs: deps.pollIntervalMs,
        },
        { kind: 'create', prompt, authorId: request.userId, messageTs: null },
        now(),
      );
      if (!created) {
        logger.info('repeated command ignored', { jobId: job.id });
        return;
      }

      let threadTs: string;
      try {
        threadTs = await slack.postMessage({ channel: job.channelId, text: rootText(job) });
      } catch (error) {
        const code = error instanceof SlackCallError ? error.code : 'unexpected_error';
        logger.warn('could not post the root message; job not started', { jobId: job.id, code });
        const message =
          code === 'not_in_channel' || code === 'channel_not_found'
            ? text.notInChannel(job.channelId)
            : text.cannotPost(code);
        await store.apply(
          {
            jobId: job.id,
            job: { phase: 'not_started', lastError: `root post failed: ${code}` },
            run: { id: run.id, patch: { state: 'failed', error: `root post failed: ${code}` } },
            enqueue: request.responseUrl
              ? [
                  {
                    jobId: job.id,
                    dedupeKey: `start-refused:${job.id}`,
                    payload: { type: 'respond', responseUrl: request.responseUrl, text: message },
                  },
                ]
              : [],
          },
          now(),
        );
        deps.onEnqueued();
        return;
      }

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
    },

    async handleReply(request) {
      const job = await store.findJobByThread(request.channelId, request.threadTs);
      if (!job) return;
      const prompt = mrkdwnToPlain(request.text).trim();
      const refused = prompt ? await refusal(prompt, request) : undefined;
      if (refused) {
        await tellPrivately(
          `refused-reply:${request.channelId}:${request.messageTs}`,
          {
            channelId: request.channelId,
            userId: request.userId,
            threadTs: request.threadTs,
            responseUrl: null,
          },
          refused,
        );
        return;
      }
      if (!prompt) {
        await store.enqueue(
          [
            {
              jobId: job.id,
              dedupeKey: `empty-reply:${job.id}:${request.messageTs}`,
              payload: {
                type: 'ephemeral',
                channel: job.channelId,
                user: request.userId,
                threadTs: job.threadTs,
                text: text.emptyFollowUp(),
              },
            },
          ],
          now(),
        );
        deps.onEnqueued();
        return;
      }
      const { run, created } = await store.insertFollowUp(
        job.id,
        { kind: 'follow_up', prompt, authorId: request.userId, messageTs: request.messageTs },
        now(),
      );
      if (!created) {
        logger.info('repeated reply ignored', { jobId: job.id, messageTs: request.messageTs });
        return;
      }
      // Read again after recording the reply: the job may have started meanwhile.
      const current = await store.getJob(job.id);
      if (current) await dispatchReply(current, run);
    },

    async finishRun(job, outcome, agentJob) {
      const runs = await store.getRuns(job.id);
      const run = [...runs].reverse().find((r) => r.state === 'sent' && r.outcome === null);
      const at = now();
      const patch: JobPatch = {
        ...(agentJob ? fromAgentJob(agentJob) : {}),
        phase: outcome === 'gone' ? 'gone' : 'idle',
        lastOutcome: outcome,
        nextPollAt: null,
        pollFailures: 0,
      };
      const updated = { ...job, ...patch };
      const notify = [job.requesterId, ...(run && run.authorId !== job.requesterId ? [run.authorId] : [])];
      await store.apply(
        {
          jobId: job.id,
          job: patch,
          ...(run ? { run: { id: run.id, patch: { outcome, outcomeAt: at } } } : {}),
          enqueue: [
            ...(run
              ? [
                  post(
                    updated,
                    `outcome:${run.seq}`,
                    outcomeText(outcome, updated, notify, deps.maxAgeMs),
                    'outcome',
                    run,
                  ),
                ]
              : []),
            ...updateRoot(updated),
          ],
        },
        at,
      );
      logger.info('run finished', { jobId: job.id, agentJobId: job.agentJobId, run: run?.seq, outcome });
      deps.onEnqueued();
    },

    async recover() {
      const { jobs, runs } = await store.interrupted();
      for (const job of jobs) {
        if (job.phase === 'posting') {
          await store.apply(
            {
              jobId: job.id,
              job: { phase: 'not_started', lastError: 'restarted before the root message was recorded' },
              enqueue: job.responseUrl
                ? [
                    {
                      jobId: job.id,
                      dedupeKey: `restart-refused:${job.id}`,
                      payload: {
                        type: 'respond',
                        responseUrl: job.responseUrl,
                        text: text.restartedBeforePost(),
                      },
                    },
                  ]
                : [],
            },
            now(),
          );
        } else {
          const first = (await store.getRuns(job.id))[0];
          const updated = { ...job, phase: 'start_unknown' as const };
          await store.apply(
            {
              jobId: job.id,
              job: { phase: 'start_unknown', lastError: 'restarted while creating the job' },
              ...(first
                ? {
                    run: {
                      id: first.id,
                      patch: { state: 'unknown' as const, error: 'restarted while creating' },
                    },
                  }
                : {}),
              enqueue: [
                post(job, 'start-unknown', text.restartedBeforeCreate(job.requesterId), 'notice', first),
                ...updateRoot(updated),
              ],
            },
            now(),
          );
        }
        logger.warn('job interrupted by a restart', { jobId: job.id, phase: job.phase });
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
                post(job, `followup-unknown:${run.id}`, text.followUpRestarted(run.authorId), 'notice', run),
              ],
            },
            now(),
          );
        } else {
          // Never sent: safe to send now (or to explain, if the job never started).
          await dispatchReply(job, run);
        }
      }
      deps.onEnqueued();
    },
  };
}
