import type { AgentJob } from '../../agent/schema.js';
import { text } from '../../blocks/messages.js';
import { agentErrorText } from '../../blocks/refusal-texts.js';
import { statusCard } from '../../blocks/status-card.js';
import { readyForCall } from '../../cluster/membership.js';
import { cardMetadata, cardUpdate } from '../../delivery/kinds/card-update.js';
import { privateNote } from '../../delivery/kinds/private-note.js';
import { threadPost } from '../../delivery/kinds/thread-post.js';
import { keys } from '../../delivery/outbox-registry.js';
import { enterPhase } from '../../domain/phases.js';
import { isNotAMember, SlackCallError } from '../../slack/caller.js';
import { CLOCK_MARGIN_S } from '../../slack/message-listing.js';
import { md, mrkdwnToPlain, userMention } from '../../slack/mrkdwn.js';
import type { JobIn, JobRecord, RunRecord } from '../../store/types.js';
import {
  errorMessage,
  isUnknownOutcome,
  logAgentError,
  recordAgentAnswer,
  startedPatch,
} from '../agent-outcomes.js';
import { createAssistantPane } from '../assistant-pane.js';
import { type InstructionChecks, STEP_VERIFICATION_LIMIT_MS } from '../instruction-checks.js';
import { type JobContext, requesterTarget } from '../job-context.js';
import { createJobPrivacyChecks } from '../job-privacy.js';
import { createFirstPrompt } from '../thread-context.js';
import { stepAnswer } from '../workflow-steps.js';

/** Starting an accepted job: the checks, the status card, and the create call upstream. */
export interface JobStart {
  /** Checks access, posts the status card and creates the job upstream. */
  startJob(jobId: number): Promise<void>;
  /** Records the thread and card Slack holds for a job being posted, then makes the create call. */
  cardRecorded(job: JobIn<'posting'>, run: RunRecord, cardTs: string): Promise<void>;
  /** The status card Slack holds for this job: `{ ts }` (undefined ts: none); undefined when Slack cannot say. */
  findCard(job: JobRecord): Promise<{ ts: string | undefined } | undefined>;
}

/** What starting a job reads: its records and claims, the calls out, the checks' and first prompt's inputs. */
type JobStartContext = Pick<JobContext, 'store' | 'applyQueued' | 'instanceId' | 'leases' | 'now'> &
  Pick<JobContext, 'monotonic' | 'slack' | 'agentFor' | 'loops' | 'logger' | 'metrics'> &
  Pick<JobContext, 'access' | 'audiences' | 'names' | 'hints' | 'settings'>;

export function createJobStart(
  ctx: JobStartContext,
  parts: {
    checks: InstructionChecks;
    /** Sends (or explains) the follow-ups that waited for the job to be created. */
    dispatchReady: (jobId: number) => Promise<void>;
    /** Records the replies posted in a mention's thread before its job was recorded. */
    catchUp: (job: JobRecord, afterTs: string, beforeTs: string) => Promise<void>;
  },
): JobStart {
  const { store, slack, logger, metrics, now } = ctx;
  const { checks, dispatchReady, catchUp } = parts;
  const { threadContextMaxChars } = ctx.settings;
  const firstPrompt = createFirstPrompt({ ...ctx, threadContextMaxChars });
  const pane = createAssistantPane(ctx);
  const privacy = createJobPrivacyChecks(ctx);
  /** Writes about a job being started apply only while this instance owns it. */
  const owner = { instanceId: ctx.instanceId, job: true };
  /**
   * Whether this instance's claim on the job, renewed by the store's clock if needed, covers the
   * whole of a call about to start that must not be made twice (the status card's post, the create
   * call): no other instance takes it over while the call may be under way. False when it was
   * taken over: the call must not be made.
   */
  const claimCovers = (job: JobRecord, kind: 'agentWrite' | 'delivery') => {
    const lease = ctx.leases[kind];
    const renew = () => store.renewClaim(ctx.instanceId, { jobId: job.id }, lease.leaseMs);
    return readyForCall(lease, renew, undefined, ctx.monotonic);
  };

  async function createUpstream(job: JobIn<'creating'>, run: RunRecord): Promise<void> {
    const prompt = await firstPrompt(job, run);
    // The claim covers the whole create call, timed by the store's clock: no other instance takes
    // the job over while the call may still be under way.
    if (!(await claimCovers(job, 'agentWrite'))) {
      logger.warn('another instance took this job over; not creating it', { jobId: job.id });
      return;
    }
    let agentJob: AgentJob | undefined;
    try {
      agentJob = await ctx.agentFor(job.projectId).createJob(prompt);
    } catch (error) {
      logAgentError(logger, error, { jobId: job.id, op: 'create' });
      const ended = enterPhase(job.phase, isUnknownOutcome(error) ? 'start_unknown' : 'not_started');
      metrics.instruction(job.origin, ended.phase === 'start_unknown' ? 'unknown' : 'failed', 'agent');
      const said = agentErrorText(error, 'job');
      await ctx.applyQueued(
        {
          jobId: job.id,
          owner,
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
              text: md`${userMention(job.requesterId)} ${said}`,
              run,
            }),
            ...cardUpdate({ ...job, ...ended }),
            ...stepAnswer(job, { refused: { reason: 'agent', error } }),
          ],
        },
        now(),
      );
    }
    if (agentJob) {
      // Only the agent call is in the try above: the agent has the job now.
      const at = now();
      const patch = {
        ...startedPatch(job.phase, agentJob, at, ctx.settings.poll.intervalMs),
        agentJobId: agentJob.id,
      };
      await recordAgentAnswer(
        () =>
          ctx.applyQueued(
            {
              jobId: job.id,
              owner,
              job: patch,
              run: { id: run.id, patch: { state: 'sent', sentAt: at } },
              incrementRunCount: true,
              enqueue: [
                ...cardUpdate({ ...job, ...patch }),
                ...stepAnswer(job, { threadTs: job.threadTs ?? '' }),
              ],
            },
            at,
          ),
        logger,
      );
      logger.info('job started', { jobId: job.id, agentJobId: agentJob.id, channel: job.channelId });
      metrics.instruction(job.origin, 'started');
      ctx.loops.poller.kick();
      await pane.working(job);
    }
    // Follow-ups that arrived while the job was being created.
    await dispatchReady(job.id);
  }

  /** Posts the status card: the thread's root for a command, a reply in the thread otherwise. */
  async function postCard(job: JobIn<'posting'>, run: RunRecord): Promise<void> {
    let cardTs: string;
    if (!(await claimCovers(job, 'delivery'))) {
      logger.warn('another instance took this job over; not posting its status card', { jobId: job.id });
      return;
    }
    try {
      const card = statusCard(job, now(), ctx.hints);
      cardTs = await slack.postMessage({
        channel: job.channelId,
        ...(job.threadTs ? { threadTs: job.threadTs } : {}),
        text: card.text,
        blocks: card.blocks,
        metadata: cardMetadata(job.id),
      });
    } catch (error) {
      const code = error instanceof SlackCallError ? error.code : 'unexpected_error';
      // An answer lost on the way back (time-out, 5xx) does not mean Slack refused the post.
      const found =
        error instanceof SlackCallError && !error.isPlatformError ? (await findCard(job))?.ts : undefined;
      if (found) {
        await cardRecorded(job, run, found);
        return;
      }
      logger.warn('could not post the status card; job not started', { jobId: job.id, code });
      metrics.instruction(job.origin, 'failed', 'slack');
      const note = isNotAMember(code) ? text.notInChannel(job.channelId) : text.cannotPost(code);
      await ctx.applyQueued(
        {
          jobId: job.id,
          owner,
          job: { ...enterPhase(job.phase, 'not_started'), lastError: `root post failed: ${code}` },
          run: { id: run.id, patch: { state: 'failed', error: `root post failed: ${code}` } },
          enqueue: [
            privateNote(job.id, keys.startRefused({ jobId: job.id }), requesterTarget(job), note),
            ...stepAnswer(job, {
              refused: isNotAMember(code) ? { reason: 'not_in_channel' } : { reason: 'cannot_post', code },
            }),
          ],
        },
        now(),
      );
      await dispatchReady(job.id);
      return;
    }
    await cardRecorded(job, run, cardTs);
  }

  async function cardRecorded(job: JobIn<'posting'>, run: RunRecord, cardTs: string): Promise<void> {
    // Replies posted under the message that started the job before its card was recorded.
    const catchUpAfter = job.origin === 'mention' || job.origin === 'direct' ? run.messageTs : null;
    // Recorded before the create call: a crash from here on leaves a row the next start explains.
    const patch = { threadTs: job.threadTs ?? cardTs, cardTs, ...enterPhase(job.phase, 'creating') };
    const moved = await store.apply(
      { jobId: job.id, owner, job: patch, run: { id: run.id, patch: { state: 'sending', sentAt: now() } } },
      now(),
    );
    if (!moved) {
      logger.warn('another instance took this job over; leaving it to that one', { jobId: job.id });
      return;
    }
    await createUpstream({ ...job, ...patch }, run);
    if (catchUpAfter) await catchUp({ ...job, ...patch }, catchUpAfter, cardTs);
  }

  const findCard = (job: JobRecord): Promise<{ ts: string | undefined } | undefined> =>
    (job.threadTs
      ? slack.findPosted({ channel: job.channelId, threadTs: job.threadTs, metadata: cardMetadata(job.id) })
      : slack.findInChannel({
          channel: job.channelId,
          oldest: Math.floor(job.createdAt / 1000) - CLOCK_MARGIN_S,
          metadata: cardMetadata(job.id),
        })
    ).then(
      (ts) => ({ ts }),
      () => undefined,
    );

  async function startJob(jobId: number): Promise<void> {
    const job = await store.getJob(jobId);
    const run = job && (await store.getRuns(job.id))[0];
    if (!job || !run || job.phase !== 'accepted') return;
    // Who can read the channel, asked beside the checks and the card (the job counts as private
    // until Slack answers, so neither waits): an answer in by the card's write goes in it.
    const settling = privacy.settleAlong(job);
    try {
      // Only the instruction counts against MAX_PROMPT_CHARS: context (a thread, a message) is extra.
      let refused = await checks.refusal(
        run.id,
        mrkdwnToPlain(job.instruction).trim(),
        {
          teamId: job.teamId,
          channelId: job.channelId,
          userId: job.requesterId,
          contextChannelId: job.contextChannelId,
        },
        job.origin,
      );
      if (refused === 'unverified') {
        const given = {
          kind: 'job' as const,
          id: job.id,
          jobId: job.id,
          since: job.createdAt,
          ...(job.origin === 'workflow' ? { limitMs: STEP_VERIFICATION_LIMIT_MS } : {}),
          to: requesterTarget(job),
          recheck: () => startJob(job.id),
        };
        refused = await checks.waitOrGiveUp(given, job.origin);
        if (!refused) return;
      }
      if (refused) {
        await ctx.applyQueued(
          {
            jobId: job.id,
            owner,
            job: { ...enterPhase(job.phase, 'not_started'), lastError: 'refused' },
            run: { id: run.id, patch: { state: 'failed', error: 'refused' } },
            enqueue: [
              privateNote(job.id, keys.refused({ jobId: job.id }), requesterTarget(job), refused.said),
              ...stepAnswer(job, { refused: refused.why }),
            ],
          },
          now(),
        );
        // Replies that arrived in the thread meanwhile are told there is no job.
        await dispatchReady(job.id);
        return;
      }
      // Only one caller (the command's task or recovery) goes on, while this instance owns the job.
      const known = settling.take();
      const patch = { ...enterPhase(job.phase, 'posting'), ...(known ? { privacy: known } : {}) };
      const expect = { phase: job.phase, runCount: job.runCount };
      if (!(await store.apply({ jobId: job.id, expect, owner, job: patch }, now()))) return;
      // Its author may have edited the instruction while it was checked (an edit is taken while it
      // is `accepted`): the card and the create call use it as it is now. Only an instruction that
      // came in a message can be edited; a command's, a form's or a step's is used as read.
      const editable = run.messageTs !== null;
      const current = editable ? ((await store.getJob(job.id)) ?? job) : job;
      const first = editable ? ((await store.getRun(run.id)) ?? run) : run;
      await pane.starting(current);
      await postCard({ ...current, ...patch }, first);
    } finally {
      // Never rejects: recorded, or left `unknown` (treated as private).
      await settling.done();
    }
  }

  return { startJob, cardRecorded, findCard };
}
