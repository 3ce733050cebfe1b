import type { Config } from '../../config/config.js';
import { type PrivateTarget, privateNote } from '../../delivery/kinds/private-note.js';
import { keys } from '../../delivery/outbox-registry.js';
import type { OutboxWrites } from '../../jobs/job-context.js';
import { withFiles } from '../../jobs/thread-context.js';
import { isWaiting, stillWaiting, type WaitingWithdrawal } from '../../jobs/withdrawal.js';
import type { Logger } from '../../logging/logger.js';
import type { SharedFile } from '../../slack/messages.js';
import { md, mrkdwnToPlain } from '../../slack/mrkdwn.js';
import type { JobRecord, JobsStore, NewOutboxItem, RunRecord, RunsStore } from '../../store/types.js';

/** Someone edited a message in a conversation: it may be an instruction still waiting. */
export interface EditRequest {
  channelId: string;
  /** The thread the message is in (its own ts when it is a thread's root or stands alone). */
  threadTs: string;
  messageTs: string;
  /** The message's author. */
  userId: string;
  /** This version of the message (Slack's `edited.ts`): notes about it are given once. */
  version: string;
  /** What the new text asks as a reply in a job's thread (undefined: an aside, or not for the bot). */
  asReply: string | undefined;
  /** What it asks as the instruction that started a job (undefined: an aside). */
  asInstruction: string | undefined;
  /** Files the edited message carries. */
  files: SharedFile[];
}

/** Someone deleted a message in a conversation: it may be an instruction still waiting. */
export interface DeleteRequest {
  channelId: string;
  /**
   * The thread the message was in; undefined when Slack did not say (a `message_deleted` without
   * `previous_message`, as Slack documents it): the store's own record of the message decides.
   */
  threadTs: string | undefined;
  messageTs: string;
  /** The deleted message's author; undefined when Slack did not say. */
  userId: string | undefined;
}

/**
 * What became of an edit or deletion: the waiting instruction `revised` or `withdrawn`; `late`
 * (the agent has it already: its author is told); `refused` (an edit too long: the earlier text
 * stays, and its author is told); `unchanged` (the same text seen again); `ignored` (no
 * instruction of this author, or one that never went out).
 */
export type EditOutcome = 'revised' | 'withdrawn' | 'late' | 'refused' | 'unchanged' | 'ignored';

/**
 * What recording an edit or deletion works with: the instruction it reads, the job kernel's
 * withdrawal (the same a stop uses), the outbox writes that revise it or tell its author.
 */
export interface EditDeps {
  store: Pick<JobsStore, 'findJobByThread' | 'threadOfOpenMessage'> & Pick<RunsStore, 'getRuns'>;
  jobs: Pick<WaitingWithdrawal, 'withdrawInstruction'>;
  outbox: OutboxWrites;
  config: Pick<Config, 'maxPromptChars'>;
  logger: Logger;
  /** When it is recorded (ms since the epoch). Default: `Date.now`. */
  now?: () => number;
}

/** A stale read (a batch took the reply meanwhile) is read again this many times. */
const ATTEMPTS = 2;

/**
 * The thread of a message: as Slack said, else the thread of the job in which it is an open
 * instruction, else the message's own (a message that started a job is its thread's root).
 */
const threadOf = async (
  store: EditDeps['store'],
  { channelId, messageTs, threadTs }: DeleteRequest,
): Promise<string> => threadTs ?? (await store.threadOfOpenMessage(channelId, messageTs)) ?? messageTs;

/** The author's own instruction carried by the message, with its job. */
async function find(
  { store }: EditDeps,
  request: DeleteRequest,
): Promise<{ job: JobRecord; run: RunRecord } | undefined> {
  const job = await store.findJobByThread(request.channelId, await threadOf(store, request));
  const run = job && (await store.getRuns(job.id)).find((r) => r.messageTs === request.messageTs);
  // Slack reports edits of anyone's messages; only the author's own instruction counts. A
  // deletion Slack did not attribute is of the message itself: whoever removed it, it is gone.
  const authors = request.userId === undefined || run?.authorId === request.userId;
  return job && run && authors ? { job, run } : undefined;
}

const authorOf = (job: JobRecord, run: RunRecord): PrivateTarget => ({
  channelId: job.channelId,
  userId: run.authorId,
  threadTs: job.threadTs,
  responseUrl: null,
});

async function tell(deps: EditDeps, item: NewOutboxItem): Promise<void> {
  await deps.outbox.enqueue([item], (deps.now ?? Date.now)());
}

async function edit(deps: EditDeps, request: EditRequest, attempt: number): Promise<EditOutcome> {
  const { logger, config } = deps;
  const found = await find(deps, request);
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
    await tell(
      deps,
      privateNote(job.id, keys.editedLate({ runId: run.id, version }), to, editText.editedLate()),
    );
    return 'late';
  }
  let done: boolean;
  let outcome: EditOutcome;
  if (!prompt) {
    const note = privateNote(job.id, keys.withdrawn({ runId: run.id }), to, editText.withdrawn());
    done = await deps.jobs.withdrawInstruction(job, run, note);
    outcome = 'withdrawn';
  } else if (prompt.length > config.maxPromptChars) {
    // What is sent counts: the text and the list of its files.
    const note = editText.editTooLong(prompt.length, config.maxPromptChars);
    await tell(deps, privateNote(job.id, keys.editRefused({ runId: run.id, version }), to, note));
    return 'refused';
  } else {
    done = await deps.outbox.applyQueued(
      {
        ...stillWaiting(job, run),
        ...(run.kind === 'create' && text !== undefined ? { job: { instruction: text.trim() } } : {}),
        run: { id: run.id, patch: { prompt } },
      },
      (deps.now ?? Date.now)(),
    );
    outcome = 'revised';
  }
  if (done) logger.info('instruction edited', { jobId: job.id, runId: run.id, outcome });
  // It went out (or was refused) between reading it and writing: read it again.
  if (!done) return attempt < ATTEMPTS ? edit(deps, request, attempt + 1) : 'late';
  return outcome;
}

async function remove(deps: EditDeps, request: DeleteRequest, attempt: number): Promise<EditOutcome> {
  const found = await find(deps, request);
  if (!found || found.run.state === 'failed') return 'ignored';
  const { job, run } = found;
  if (!isWaiting(job, run)) {
    const note = editText.deletedLate();
    await tell(deps, privateNote(job.id, keys.deletedLate({ runId: run.id }), authorOf(job, run), note));
    return 'late';
  }
  // Its author took it back themselves: nothing to tell them.
  if (await deps.jobs.withdrawInstruction(job, run)) return 'withdrawn';
  return attempt < ATTEMPTS ? remove(deps, request, attempt + 1) : 'late';
}

/**
 * Replaces a waiting instruction's text (recorded before Slack is acknowledged, like the
 * instruction itself), or tells its author privately that it is too late.
 */
export const recordEdit = (deps: EditDeps, request: EditRequest): Promise<EditOutcome> =>
  edit(deps, request, 1);

/**
 * Takes a waiting instruction back (recorded before Slack is acknowledged: a restart cannot send
 * what its author took back), or tells its author privately that it is too late.
 */
export const recordDelete = (deps: EditDeps, request: DeleteRequest): Promise<EditOutcome> =>
  remove(deps, request, 1);

/**
 * What the bot tells a person privately about an edit or deletion of an instruction: a prompt the
 * agent has cannot be taken back.
 */
export const editText = {
  editedLate: () =>
    md`:pencil2: The docs agent already has the earlier version of your message, so this edit does not reach it. To change course, reply in the thread with what you want now.`,
  deletedLate: () =>
    md`:wastebasket: The docs agent already has the message you deleted; deleting it does not take it back. To change course, reply in the thread with what you want now.`,
  editTooLong: (length: number, max: number) =>
    md`:straight_ruler: Your edit is ${length} characters long; the limit is ${max}. The earlier version is what the docs agent gets.`,
  withdrawn: () =>
    md`:information_source: After your edit that message is no longer an instruction for the docs agent, so it will not be sent to the agent.`,
  notRecorded: () =>
    md`:warning: I could not record your edit or deletion just now, so the docs agent may still get the earlier version. Please try again in a moment.`,
};
