import type { AccessPolicy } from '../access/access-policy.js';
import type { AgentClient } from '../agent/client.js';
import type { AgentJob } from '../agent/schema.js';
import type { Logger } from '../logger.js';
import { type InstructionSurface, type MetricsHooks, noMetrics } from '../metrics/hooks.js';
import { SlackCallError, type SlackGateway } from '../slack/gateway.js';
import { type Mrkdwn, md, mrkdwnToPlain, userMention } from '../slack/mrkdwn.js';
import type { UserNames } from '../slack/user-names.js';
import type { JobPatch, JobRecord, Orphans, RunOutcome, RunRecord, Store } from '../store/types.js';
import { outcomePost, statusCard } from '../views/status-card.js';
import {
  errorMessage,
  fromAgentJob,
  isUnknownOutcome,
  logAgentError,
  recordAgentAnswer,
  startedPatch,
} from './agent-outcomes.js';
import { createReplyCatchUp } from './catch-up.js';
import { createFirstPrompt } from './first-prompt.js';
import { createFollowUps } from './follow-ups.js';
import { createHolds, type Held } from './holds.js';
import { agentErrorText, type RenderHints, refusalText, text } from './messages.js';
import { type PrivateTarget, privateNote, rootUpdate, threadPost } from './outbox-items.js';
import { keys, rootMetadata } from './outbox-registry.js';
import {
  enterPhase,
  expectPhase,
  type JobIn,
  moveJob,
  POLLED,
  STILL_STARTING,
  THREAD_RELEASING_PHASES,
} from './phases.js';
import type {
  MentionOutcome,
  MentionRequest,
  ReplyRequest,
  ShortcutRequest,
  StartRequest,
} from './requests.js';
import { withContext } from './thread-context.js';

export { outcomeOf } from './agent-outcomes.js';
export type {
  MentionOutcome,
  MentionRequest,
  ReplyRequest,
  ShortcutRequest,
  StartRequest,
} from './requests.js';

/**
 * The job rules. Every instruction is first *accepted* (recorded in the store, fast, before
 * Slack is acknowledged), then *processed* in the background; a crash in between leaves a row
 * that {@link JobService.recover} picks up.
 */
export interface JobService {
  /** Records a command. Returns the new job's id, or undefined when it is a repeat. */
  acceptCommand(request: StartRequest): Promise<number | undefined>;
  /**
   * Records a mention: a new job in its thread, or, where the thread already has a job, a
   * follow-up to it. Undefined when it is a repeat.
   */
  acceptMention(request: MentionRequest): Promise<MentionOutcome>;
  /**
   * Records a shortcut submission: the new job's id; `repeat` for the same submission again;
   * `thread_taken` when the message's thread already has a job (nothing recorded).
   */
  acceptShortcut(request: ShortcutRequest): Promise<{ job: number } | 'repeat' | 'thread_taken'>;
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
  /**
   * Leaves recorded work this instance has no background slot for to the store: the jobs still
   * to start and the follow-ups still to send lose their owner, and the next take-over round
   * (this instance's or another's, see {@link Store.adoptOrphans}) carries them on. Never
   * rejects: if the store cannot be written, the work stays this instance's and its next start
   * carries it on.
   */
  handBack(work: { jobIds?: number[]; runIds?: number[] }): Promise<void>;
  /**
   * Stops waiting for batch windows. Replies still waiting stay recorded as `ready`, and the
   * instance that takes over this one's work (or this one's next start) sends them.
   */
  stop(): void;
}

export interface JobServiceDeps {
  store: Store;
  /** This process's instance id: owner of the instructions it accepts until they are sent. */
  instanceId: string;
  /** The agent API client of a documentation project (null: the default project). */
  agentFor: (projectId: string | null) => AgentClient;
  /** The project a channel's jobs run on (`CHANNEL_PROJECTS`, else the default). */
  projectFor: (channelId: string) => string;
  /** Replies in one thread within this many milliseconds go to the agent as one follow-up. */
  batchMs: number;
  /** Most characters of thread context in a first prompt. */
  threadContextMaxChars: number;
  names: UserNames;
  hints: RenderHints;
  /** The bot's own user id, once known (auth.test). */
  botUserId: () => Promise<string | undefined>;
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
  /** First wait before an instruction held for verification is checked again, in milliseconds. */
  holdRetryMs?: number;
  /**
   * Runs background work (a batch whose window has passed) among the tracked tasks; false when
   * no slot is free (the batch then waits and tries again).
   */
  runTask: (name: string, work: () => Promise<void>) => boolean;
  /** What becomes of instructions and runs, for the metrics endpoint. Default: not reported. */
  metrics?: Pick<MetricsHooks, 'instruction' | 'runFinished'>;
  now?: () => number;
}

export function createJobService(deps: JobServiceDeps): JobService {
  const { store, slack, logger } = deps;
  const now = deps.now ?? Date.now;
  const metrics = deps.metrics ?? noMetrics;
  const agentOf = (job: JobRecord) => deps.agentFor(job.projectId);
  const followUps = createFollowUps({ ...deps, metrics, now });
  const { dispatchReady, dropRun } = followUps;
  const firstPrompt = createFirstPrompt(deps);
  const holds = createHolds({
    ...deps,
    now,
    ...(deps.holdRetryMs !== undefined ? { firstRetryMs: deps.holdRetryMs } : {}),
  });
  const catchUp = createReplyCatchUp({
    ...deps,
    accept: (request) => service.acceptReply(request),
    process: (runId, teamId) => service.processReply(runId, teamId),
  });

  /**
   * Checks length and access, and counts the run against the hourly limits; returns the refusal
   * to give, if any.
   */
  async function refusal(
    runId: number,
    prompt: string,
    who: { teamId: string | undefined; channelId: string; userId: string },
    surface: InstructionSurface,
  ): Promise<Mrkdwn | 'held' | undefined> {
    if (prompt.length > deps.maxPromptChars) {
      metrics.instruction(surface, 'refused', 'too_long');
      return text.promptTooLong(prompt.length, deps.maxPromptChars);
    }
    const checked = await deps.access.check(who);
    const decision = checked.allowed ? await deps.access.reserve(runId) : checked;
    if (decision.allowed) return undefined;
    // Slack could not say who the author is: nothing goes to the agent until it can (counted
    // once it is sent or refused).
    if (decision.reason === 'unverified') return 'held';
    metrics.instruction(surface, 'refused', decision.reason);
    logger.info('instruction refused', { reason: decision.reason, user: who.userId, channel: who.channelId });
    return refusalText(decision);
  }

  /**
   * Keeps an instruction whose author Slack could not confirm, to be checked again; once it has
   * waited too long, the refusal to give instead (undefined while it is held).
   */
  async function holdOrGiveUp(held: Held, surface: InstructionSurface): Promise<Mrkdwn | undefined> {
    if (await holds.hold(held)) return undefined;
    metrics.instruction(surface, 'refused', 'unverified');
    return text.heldTooLong();
  }

  async function createUpstream(job: JobIn<'creating'>, run: RunRecord): Promise<void> {
    const prompt = await firstPrompt(job, run);
    let agentJob: AgentJob | undefined;
    try {
      agentJob = await agentOf(job).createJob(prompt);
    } catch (error) {
      logAgentError(logger, error, { jobId: job.id, op: 'create' });
      const ended = enterPhase(job.phase, isUnknownOutcome(error) ? 'start_unknown' : 'not_started');
      metrics.instruction(job.origin, ended.phase === 'start_unknown' ? 'unknown' : 'failed', 'agent');
      await store.apply(
        {
          jobId: job.id,
          job: { ...ended, lastError: errorMessage(error) },
          run: {
            id: run.id,
            patch: { state: isUnknownOutcome(error) ? 'unknown' : 'failed', error: errorMessage(error) },
          },
          enqueue: [
            threadPost({
              job,
              key: keys.startError({ jobId: job.id }),
              kind: 'notice',
              text: md`${userMention(job.requesterId)} ${agentErrorText(error, 'job')}`,
              run,
            }),
            ...rootUpdate({ ...job, ...ended }),
          ],
        },
        now(),
      );
    }
    if (agentJob) {
      // Only the agent call is in the try above: the agent has the job now.
      const at = now();
      const patch = {
        ...startedPatch(job.phase, agentJob, at, deps.pollIntervalMs),
        agentJobId: agentJob.id,
      };
      await recordAgentAnswer(
        () =>
          store.apply(
            {
              jobId: job.id,
              job: patch,
              run: { id: run.id, patch: { state: 'sent', sentAt: at } },
              incrementRunCount: true,
              enqueue: rootUpdate({ ...job, ...patch }),
            },
            at,
          ),
        logger,
      );
      logger.info('job started', { jobId: job.id, agentJobId: agentJob.id, channel: job.channelId });
      metrics.instruction(job.origin, 'started');
      deps.onRunStarted();
    }
    deps.onEnqueued();
    // Follow-ups that arrived while the job was being created.
    await dispatchReady(job.id);
  }

  /** Posts the status card: the thread's root for a command, a reply in the thread otherwise. */
  async function postRoot(job: JobIn<'posting'>, run: RunRecord): Promise<void> {
    let cardTs: string;
    try {
      const card = statusCard(job, now(), deps.hints);
      cardTs = await slack.postMessage({
        channel: job.channelId,
        ...(job.threadTs ? { threadTs: job.threadTs } : {}),
        text: card.text,
        blocks: card.blocks,
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
      metrics.instruction(job.origin, 'failed', 'slack');
      const note =
        code === 'not_in_channel' || code === 'channel_not_found'
          ? text.notInChannel(job.channelId)
          : text.cannotPost(code);
      await store.apply(
        {
          jobId: job.id,
          job: { ...enterPhase(job.phase, 'not_started'), lastError: `root post failed: ${code}` },
          run: { id: run.id, patch: { state: 'failed', error: `root post failed: ${code}` } },
          enqueue: [privateNote(job.id, keys.startRefused({ jobId: job.id }), requesterTarget(job), note)],
        },
        now(),
      );
      deps.onEnqueued();
      await dispatchReady(job.id);
      return;
    }
    await rootRecorded(job, run, cardTs);
  }

  /** Records the thread and card, then makes the create call. */
  async function rootRecorded(job: JobIn<'posting'>, run: RunRecord, cardTs: string): Promise<void> {
    const catchUpAfter = job.origin === 'mention' ? run.messageTs : null;
    // Recorded before the create call: a crash from here on leaves a row the next start explains.
    const patch = { threadTs: job.threadTs ?? cardTs, cardTs, ...enterPhase(job.phase, 'creating') };
    await store.apply(
      { jobId: job.id, job: patch, run: { id: run.id, patch: { state: 'sending', sentAt: now() } } },
      now(),
    );
    await createUpstream({ ...job, ...patch }, run);
    if (catchUpAfter) await catchUp({ ...job, ...patch }, catchUpAfter, cardTs);
  }

  /** The status card Slack holds for this job: `{ ts }` (undefined ts: none); undefined when Slack cannot say. */
  const findRoot = (job: JobRecord): Promise<{ ts: string | undefined } | undefined> =>
    (job.threadTs
      ? slack.findPosted({ channel: job.channelId, threadTs: job.threadTs, metadata: rootMetadata(job.id) })
      : slack.findInChannel({
          channel: job.channelId,
          oldest: Math.floor(job.createdAt / 1000) - 1,
          metadata: rootMetadata(job.id),
        })
    ).then(
      (ts) => ({ ts }),
      () => undefined,
    );

  const requesterTarget = (job: JobRecord): PrivateTarget => ({
    channelId: job.channelId,
    userId: job.requesterId,
    // A job started inside a conversation answers there; a command's thread may not exist yet.
    threadTs: job.origin === 'command' ? null : job.threadTs,
    responseUrl: job.responseUrl,
  });

  /** Records a new job and its first run. */
  const insert = (
    fields: Pick<JobRecord, 'channelId' | 'requesterId' | 'instruction' | 'triggerKey'> &
      Partial<Pick<JobRecord, 'origin' | 'threadTs' | 'contextTs' | 'responseUrl'>> & { teamId: string },
    prompt: string,
    messageTs: string | null,
  ) =>
    store.insertJob(
      {
        responseUrl: null,
        ...fields,
        projectId: deps.projectFor(fields.channelId),
        pollIntervalMs: deps.pollIntervalMs,
        owner: deps.instanceId,
      },
      { kind: 'create', prompt, authorId: fields.requesterId, messageTs, owner: deps.instanceId },
      now(),
    );

  const service: JobService = {
    stop() {
      followUps.stop();
      holds.stop();
    },

    async handBack({ jobIds = [], runIds = [] }) {
      if (jobIds.length === 0 && runIds.length === 0) return;
      try {
        await store.releaseWork(deps.instanceId, { jobIds, runIds });
        logger.warn('no room for background work: left to the store for the next take-over round', {
          jobs: jobIds,
          runs: runIds,
        });
      } catch (error) {
        logger.error('could not leave work to the store; it is carried on at the next start', {
          jobs: jobIds,
          runs: runIds,
          error,
        });
      }
    },

    async acceptCommand(request) {
      const { job, created } = await insert(
        {
          teamId: request.teamId,
          channelId: request.channelId,
          requesterId: request.userId,
          instruction: request.text.trim(),
          triggerKey: `command:${request.triggerId}`,
          responseUrl: request.responseUrl,
        },
        mrkdwnToPlain(request.text).trim(),
        null,
      );
      if (!created) logger.info('repeated command ignored', { jobId: job.id });
      return created ? job.id : undefined;
    },

    async acceptMention(request) {
      const reply = async () => {
        const runId = await service.acceptReply({
          ...request,
          threadTs: request.threadTs ?? request.messageTs,
        });
        return runId === undefined ? undefined : { reply: runId };
      };
      const existing = request.threadTs && (await store.findJobByThread(request.channelId, request.threadTs));
      // A job that never ran (or that the agent forgot) gives the thread up; any other takes the mention.
      if (existing && !THREAD_RELEASING_PHASES.has(existing.phase)) return reply();
      // Nothing to start a job with (the listener explains a bare mention).
      if (!request.text.trim()) return undefined;
      const triggerKey = `mention:${request.channelId}:${request.messageTs}`;
      const result = await insert(
        {
          teamId: request.teamId,
          channelId: request.channelId,
          requesterId: request.userId,
          instruction: request.text.trim(),
          triggerKey,
          origin: 'mention',
          // The mention's own message becomes the thread, or the thread it was posted in.
          threadTs: request.threadTs ?? request.messageTs,
          contextTs: request.threadTs ? request.messageTs : null,
        },
        mrkdwnToPlain(request.text).trim(),
        // The mention is the first run's message: the same message seen again as a reply is a repeat.
        request.messageTs,
      );
      if (result.created) return { job: result.job.id };
      // Someone started a job in this thread meanwhile: the mention is a follow-up to it.
      if (result.job.triggerKey !== triggerKey) return reply();
      logger.info('repeated mention ignored', { jobId: result.job.id });
      return undefined;
    },

    async acceptShortcut(request) {
      const { message } = request;
      const inPlace = request.channelId === message.channelId;
      const lines = message.text.trim()
        ? [{ author: message.author, text: mrkdwnToPlain(message.text).trim() }]
        : [];
      const prompt = withContext(
        mrkdwnToPlain(request.instruction).trim(),
        lines,
        // The message is what the user chose to send (at most 3,000 characters in the modal).
        Math.max(deps.threadContextMaxChars, 3_000),
        request.permalink ? { link: request.permalink } : {},
      );
      const triggerKey = `shortcut:${request.viewId}`;
      // In the message's own channel the job lives in its thread; elsewhere it gets a new one.
      const threadTs = inPlace ? (message.threadTs ?? message.ts) : null;
      const result = await insert(
        {
          teamId: request.teamId,
          channelId: request.channelId,
          requesterId: request.userId,
          instruction: request.instruction.trim(),
          triggerKey,
          origin: 'shortcut',
          threadTs,
        },
        prompt,
        null,
      );
      if (result.created) return { job: result.job.id };
      return result.job.triggerKey === triggerKey ? 'repeat' : 'thread_taken';
    },

    async startJob(jobId) {
      const job = await store.getJob(jobId);
      const run = job && (await store.getRuns(job.id))[0];
      if (!job || !run || job.phase !== 'accepted') return;
      // Only the instruction counts against MAX_PROMPT_CHARS: context (a thread, a message) is extra.
      let refused = await refusal(
        run.id,
        mrkdwnToPlain(job.instruction).trim(),
        {
          teamId: job.teamId,
          channelId: job.channelId,
          userId: job.requesterId,
        },
        job.origin,
      );
      if (refused === 'held') {
        const given = {
          kind: 'job' as const,
          id: job.id,
          jobId: job.id,
          since: job.createdAt,
          to: requesterTarget(job),
          recheck: () => service.startJob(job.id),
        };
        refused = await holdOrGiveUp(given, job.origin);
        if (!refused) return;
      }
      if (refused) {
        await store.apply(
          {
            jobId: job.id,
            job: { ...enterPhase(job.phase, 'not_started'), lastError: 'refused' },
            run: { id: run.id, patch: { state: 'failed', error: 'refused' } },
            enqueue: [privateNote(job.id, keys.refused({ jobId: job.id }), requesterTarget(job), refused)],
          },
          now(),
        );
        deps.onEnqueued();
        // Replies that arrived in the thread meanwhile are told there is no job.
        await dispatchReady(job.id);
        return;
      }
      // Only one caller (the command's task or recovery) may go on.
      if (!(await moveJob(store, job.id, job.phase, 'posting', now()))) return;
      await postRoot({ ...job, ...enterPhase(job.phase, 'posting') }, run);
    },

    async acceptReply(request) {
      const job = await store.findJobByThread(request.channelId, request.threadTs);
      if (!job || (request.mentionsBot && THREAD_RELEASING_PHASES.has(job.phase))) return undefined;
      const { run, created } = await store.insertFollowUp(
        job.id,
        {
          kind: 'follow_up',
          prompt: mrkdwnToPlain(request.text).trim(),
          authorId: request.userId,
          messageTs: request.messageTs,
          owner: deps.instanceId,
          teamId: request.teamId ?? null,
        },
        now(),
      );
      if (!created) logger.info('repeated reply ignored', { jobId: job.id, messageTs: request.messageTs });
      return created ? run.id : undefined;
    },

    async processReply(runId, teamId) {
      const run = await store.getRun(runId);
      const job = run && (await store.getJob(run.jobId));
      if (!run || !job) return;
      // Checked before a restart: only its batch is left to send.
      if (run.state === 'ready') return dispatchReady(job.id);
      if (run.state !== 'pending') return;
      const to = {
        channelId: job.channelId,
        userId: run.authorId,
        threadTs: job.threadTs,
        responseUrl: null,
      };
      if (!run.prompt) {
        metrics.instruction('reply', 'refused', 'empty');
        return dropRun(job, run, 'empty', text.emptyFollowUp(), to);
      }
      let refused = await refusal(
        run.id,
        run.prompt,
        {
          teamId: teamId ?? run.teamId ?? job.teamId,
          channelId: job.channelId,
          userId: run.authorId,
        },
        'reply',
      );
      if (refused === 'held') {
        const given = {
          kind: 'reply' as const,
          id: run.id,
          jobId: job.id,
          since: run.createdAt,
          to,
          recheck: () => service.processReply(run.id, teamId),
        };
        refused = await holdOrGiveUp(given, 'reply');
        if (!refused) return;
      }
      if (refused) return dropRun(job, run, 'refused', refused, to);
      await store.apply({ jobId: job.id, run: { id: run.id, patch: { state: 'ready' } } }, now());
      await dispatchReady(job.id);
    },

    async finishRun(job, outcome, agentJob) {
      // Every run the agent accepted and that has no outcome yet ends here: a follow-up sent
      // while the agent was still working merges into the same result.
      const open = (await store.getRuns(job.id)).filter((r) => r.state === 'sent' && r.outcome === null);
      const latest = open.at(-1);
      const at = now();
      // The poller finishes the runs of the jobs it watches, and only those.
      const from = expectPhase(job.phase, POLLED);
      const patch: JobPatch = {
        ...(agentJob ? fromAgentJob(agentJob) : {}),
        ...enterPhase(from, outcome === 'gone' ? 'gone' : 'idle'),
        lastOutcome: outcome,
        nextPollAt: null,
      };
      const updated = { ...job, ...patch };
      const notify = [...new Set([job.requesterId, ...open.map((r) => r.authorId)])];
      const post = outcomePost(outcome, updated, notify, deps.maxAgeMs, deps.hints);
      const applied = await store.apply(
        {
          jobId: job.id,
          expect: { phase: job.phase, runCount: job.runCount },
          job: patch,
          runs: open.map((r) => ({ id: r.id, patch: { outcome, outcomeAt: at } })),
          enqueue: [
            ...(latest
              ? [
                  threadPost({
                    job: updated,
                    key: keys.outcome({ jobId: job.id, runSeq: latest.seq }),
                    kind: 'outcome',
                    text: post.text,
                    run: latest,
                    covers: open,
                    blocks: post.blocks,
                  }),
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
      metrics.runFinished(outcome);
      deps.onEnqueued();
      return true;
    },

    async notePollRefused(job) {
      await store.enqueue(
        [
          threadPost({
            job,
            key: keys.pollRefused({ jobId: job.id, runCount: job.runCount }),
            kind: 'notice',
            text: text.pollRefused(job.requesterId),
          }),
        ],
        now(),
      );
      deps.onEnqueued();
    },

    async recover({ jobs, runs }) {
      for (const adopted of jobs) {
        // Only jobs still being started are taken over (see Store.adoptOrphans).
        const job = { ...adopted, phase: expectPhase(adopted.phase, STILL_STARTING) };
        if (job.phase === 'accepted') logger.info('taking over a job still to start', { jobId: job.id });
        else
          logger.warn('job interrupted: the process starting it stopped', {
            jobId: job.id,
            phase: job.phase,
          });
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
          const posting = { ...job, phase: job.phase };
          if (found?.ts && first) {
            await rootRecorded(posting, first, found.ts);
            continue;
          }
          if (found && first) {
            if (await moveJob(store, job.id, posting.phase, 'accepted', now()))
              await service.startJob(job.id);
            continue;
          }
          metrics.instruction(job.origin, 'failed', 'restart');
          await store.apply(
            {
              jobId: job.id,
              expect,
              job: {
                ...enterPhase(posting.phase, 'not_started'),
                lastError: 'restarted while posting the root message',
              },
              ...(first
                ? { run: { id: first.id, patch: { state: 'failed' as const, error: 'restarted' } } }
                : {}),
              enqueue: [
                privateNote(
                  job.id,
                  keys.restartRefused({ jobId: job.id }),
                  requesterTarget(job),
                  text.restartedBeforePost(),
                ),
              ],
            },
            now(),
          );
        } else {
          const unknown = enterPhase(job.phase, 'start_unknown');
          metrics.instruction(job.origin, 'unknown', 'restart');
          await store.apply(
            {
              jobId: job.id,
              expect,
              job: { ...unknown, lastError: 'restarted while creating the job' },
              ...(first
                ? { run: { id: first.id, patch: { state: 'unknown' as const, error: 'restarted' } } }
                : {}),
              enqueue: [
                threadPost({
                  job,
                  key: keys.startUnknown({ jobId: job.id }),
                  kind: 'notice',
                  text: text.restartedBeforeCreate(job.requesterId),
                  run: first,
                }),
                ...rootUpdate({ ...job, ...unknown }),
              ],
            },
            now(),
          );
        }
        // Follow-ups that waited for this job to be created (other instances may hold them).
        await dispatchReady(job.id);
      }
      for (const run of runs) {
        const job = await store.getJob(run.jobId);
        if (!job) continue;
        if (run.state === 'sending') {
          metrics.instruction('reply', 'unknown', 'restart');
          await store.apply(
            {
              jobId: job.id,
              run: { id: run.id, patch: { state: 'unknown', error: 'restarted while sending' } },
              enqueue: [
                threadPost({
                  job,
                  key: keys.followUpUnknown({ jobId: job.id, runId: run.id }),
                  kind: 'notice',
                  text: text.followUpRestarted(run.authorId),
                  run,
                }),
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
