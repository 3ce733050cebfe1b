import { editText } from '../blocks/edit-texts.js';
import { type PrivateTarget, privateNote } from '../delivery/kinds/private-note.js';
import { keys } from '../delivery/outbox-registry.js';
import { enterPhase, FIRST_PHASE } from '../domain/phases.js';
import { mrkdwnToPlain } from '../slack/mrkdwn.js';
import type { Change, JobRecord, NewOutboxItem, RunRecord, RunState } from '../store/types.js';
import type { JobContext } from './job-context.js';
import type { DeleteRequest, EditRequest } from './requests.js';
import { withFiles } from './shared-files.js';

/**
 * What became of an edit or deletion: the waiting instruction `revised` or `withdrawn`; `late`
 * (the agent has it already: its author is told); `refused` (an edit too long: the earlier text
 * stays, and its author is told); `unchanged` (the same text seen again); `ignored` (no
 * instruction of this author, or one that never went out).
 */
export type EditOutcome = 'revised' | 'withdrawn' | 'late' | 'refused' | 'unchanged' | 'ignored';

/** Edits and deletions of instructions: recorded before Slack is acknowledged, like the instructions. */
export interface Edits {
  /** Replaces a waiting instruction's text, or tells its author privately that it is too late. */
  acceptEdit(request: EditRequest): Promise<EditOutcome>;
  /** Takes a waiting instruction back, or tells its author privately that it is too late. */
  acceptDelete(request: DeleteRequest): Promise<EditOutcome>;
}

/** Taking back, at once, everything of a job that has not reached the agent (a stop). */
export interface WaitingWithdrawal {
  /**
   * Withdraws every instruction of the job still waiting (as a deletion would: a reply in its
   * batch window or held, a first instruction whose job has not started); returns those taken
   * back. One that a batch or the job's start took meanwhile is left to go on.
   */
  withdrawWaiting(job: JobRecord): Promise<RunRecord[]>;
}

/** A stale read (a batch took the reply meanwhile) is read again this many times. */
const ATTEMPTS = 2;

export function createEdits(
  ctx: Pick<JobContext, 'store' | 'logger' | 'now' | 'settings' | 'applyQueued' | 'enqueue'>,
  /** Tells replies that waited for a job which will now never start that there is none. */
  dispatchReady: (jobId: number) => Promise<void>,
): Edits & WaitingWithdrawal {
  const { store, logger, now } = ctx;

  /**
   * The thread of a message: as Slack said, else the thread of the job in which it is an open
   * instruction, else the message's own (a message that started a job is its thread's root).
   */
  const threadOf = async ({ channelId, messageTs, threadTs }: DeleteRequest): Promise<string> =>
    threadTs ?? (await store.threadOfOpenMessage(channelId, messageTs)) ?? messageTs;

  /** The author's own instruction carried by the message, with its job. */
  async function find(request: DeleteRequest): Promise<{ job: JobRecord; run: RunRecord } | undefined> {
    const job = await store.findJobByThread(request.channelId, await threadOf(request));
    const run = job && (await store.getRuns(job.id)).find((r) => r.messageTs === request.messageTs);
    // Slack reports edits of anyone's messages; only the author's own instruction counts. A
    // deletion Slack did not attribute is of the message itself: whoever removed it, it is gone.
    const authors = request.userId === undefined || run?.authorId === request.userId;
    return job && run && authors ? { job, run } : undefined;
  }

  /**
   * The states in which the instruction has not gone out: a reply waiting for its checks or its
   * batch; a job's first instruction while the job is only recorded (its create call not made).
   */
  const waitingStates = (run: RunRecord): readonly RunState[] =>
    run.kind === 'create' ? ['pending'] : ['pending', 'ready'];
  const isWaiting = (job: JobRecord, run: RunRecord) =>
    waitingStates(run).includes(run.state) && (run.kind !== 'create' || job.phase === FIRST_PHASE);

  /** Only while it still waits: a batch (or the job's start) that took it meanwhile wins. */
  const guard = (job: JobRecord, run: RunRecord): Pick<Change, 'jobId' | 'expect' | 'expectRun'> => ({
    jobId: job.id,
    expectRun: { id: run.id, states: waitingStates(run) },
    // A first instruction: only while its job is as it was read, only recorded (see isWaiting).
    ...(run.kind === 'create' ? { expect: { phase: job.phase, runCount: job.runCount } } : {}),
  });

  const authorOf = (job: JobRecord, run: RunRecord): PrivateTarget => ({
    channelId: job.channelId,
    userId: run.authorId,
    threadTs: job.threadTs,
    responseUrl: null,
  });

  async function tell(item: NewOutboxItem): Promise<void> {
    await ctx.enqueue([item], now());
  }

  /** Takes a waiting instruction back: a job's first one means the job never starts. */
  async function withdraw(job: JobRecord, run: RunRecord, note?: NewOutboxItem): Promise<boolean> {
    const withdrawn = await ctx.applyQueued(
      {
        ...guard(job, run),
        ...(run.kind === 'create'
          ? { job: { ...enterPhase('accepted', 'not_started'), lastError: 'withdrawn' } }
          : {}),
        run: { id: run.id, patch: { state: 'failed', error: 'withdrawn' } },
        enqueue: note ? [note] : [],
      },
      now(),
    );
    if (withdrawn) logger.info('instruction withdrawn', { jobId: job.id, runId: run.id });
    // Replies that waited for this job to start are told there is none.
    if (withdrawn && run.kind === 'create') await dispatchReady(job.id);
    return withdrawn;
  }

  async function acceptEdit(request: EditRequest, attempt = 1): Promise<EditOutcome> {
    const found = await find(request);
    // Refused or withdrawn before: its author was told then, and nothing of it went out.
    if (!found || found.run.state === 'failed') return 'ignored';
    const { job, run } = found;
    const to = authorOf(job, run);
    const version = request.version;
    // The same rules as when the message first arrived: asides and, in mention mode, replies
    // without the bot's mention are not for the agent.
    const text = run.kind === 'create' ? request.asInstruction : request.asReply;
    const plain = text === undefined ? '' : mrkdwnToPlain(text).trim();
    const prompt = text === undefined ? '' : withFiles(plain, request.files);
    // Seen before (Slack delivers an event again): what it asked is what the run holds.
    if (prompt === run.prompt) return 'unchanged';
    if (!isWaiting(job, run)) {
      await tell(privateNote(job.id, keys.editedLate({ runId: run.id, version }), to, editText.editedLate()));
      return 'late';
    }
    let done: boolean;
    let outcome: EditOutcome;
    if (!prompt) {
      const note = privateNote(job.id, keys.withdrawn({ runId: run.id }), to, editText.withdrawn());
      done = await withdraw(job, run, note);
      outcome = 'withdrawn';
    } else if (prompt.length > ctx.settings.maxPromptChars) {
      // What is sent counts: the text and the list of its files.
      const note = editText.editTooLong(prompt.length, ctx.settings.maxPromptChars);
      await tell(privateNote(job.id, keys.editRefused({ runId: run.id, version }), to, note));
      return 'refused';
    } else {
      done = await ctx.applyQueued(
        {
          ...guard(job, run),
          ...(run.kind === 'create' && text !== undefined ? { job: { instruction: text.trim() } } : {}),
          run: { id: run.id, patch: { prompt } },
        },
        now(),
      );
      outcome = 'revised';
    }
    if (done) logger.info('instruction edited', { jobId: job.id, runId: run.id, outcome });
    // It went out (or was refused) between reading it and writing: read it again.
    if (!done) return attempt < ATTEMPTS ? acceptEdit(request, attempt + 1) : 'late';
    return outcome;
  }

  async function acceptDelete(request: DeleteRequest, attempt = 1): Promise<EditOutcome> {
    const found = await find(request);
    if (!found || found.run.state === 'failed') return 'ignored';
    const { job, run } = found;
    if (!isWaiting(job, run)) {
      const note = editText.deletedLate();
      await tell(privateNote(job.id, keys.deletedLate({ runId: run.id }), authorOf(job, run), note));
      return 'late';
    }
    // Its author took it back themselves: nothing to tell them.
    if (await withdraw(job, run)) return 'withdrawn';
    return attempt < ATTEMPTS ? acceptDelete(request, attempt + 1) : 'late';
  }

  async function withdrawWaiting(job: JobRecord): Promise<RunRecord[]> {
    const taken: RunRecord[] = [];
    for (const run of await store.getRuns(job.id))
      if (isWaiting(job, run) && (await withdraw(job, run))) taken.push(run);
    return taken;
  }

  return {
    acceptEdit: (request) => acceptEdit(request),
    acceptDelete: (request) => acceptDelete(request),
    withdrawWaiting,
  };
}
