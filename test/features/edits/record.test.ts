import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type DeleteRequest,
  type EditRequest,
  editText,
  recordDelete,
  recordEdit,
} from '../../../src/features/edits/record.js';
import { createWithdrawal } from '../../../src/jobs/withdrawal.js';
import { TEAM } from '../../helpers/fake-network.js';
import { jobRecording, recordingOf } from '../../helpers/job-requests.js';
import {
  CHANNEL,
  createJobWorld,
  HELPER,
  type JobWorld,
  REPLY_TS,
  REQUESTER,
} from '../../helpers/job-world.js';

const THREAD = '1700000000.000001';

let w: JobWorld;
const dispatchReady = vi.fn(async (_jobId: number) => {});
/**
 * The feature's recording, over the job kernel's withdrawal and outbox writes and the world's
 * settings and clock, as the app hands them.
 */
function recording(world: JobWorld) {
  const deps = {
    store: world.store,
    jobs: createWithdrawal(world.ctx, dispatchReady),
    outbox: world.ctx,
    config: world.ctx.settings,
    logger: world.ctx.logger,
    now: world.ctx.now,
  };
  return {
    recordEdit: (request: EditRequest) => recordEdit(deps, request),
    recordDelete: (request: DeleteRequest) => recordDelete(deps, request),
  };
}
let edits: ReturnType<typeof recording>;
beforeEach(() => {
  w = createJobWorld({ MAX_PROMPT_CHARS: '40' });
  dispatchReady.mockClear();
  edits = recording(w);
});
afterEach(async () => {
  await w.store.close();
});

/** A job a mention asked for, recorded and not yet started: its first instruction is the mention. */
async function mentioned() {
  const outcome = await recordingOf(
    jobRecording(w, async () => undefined),
    w,
  ).mention({
    teamId: TEAM,
    channelId: CHANNEL,
    userId: REQUESTER,
    text: 'Document the limits',
    messageTs: '1700000100.000100',
    threadTs: undefined,
  });
  if (!outcome || !('job' in outcome)) throw new Error('the mention started no job');
  const job = await w.job(outcome.job);
  const [run] = await w.runs(job.id);
  if (!run) throw new Error('no first run');
  return { job, run };
}

const edit = (fields: Partial<EditRequest> = {}): EditRequest => ({
  channelId: CHANNEL,
  threadTs: THREAD,
  messageTs: REPLY_TS,
  userId: HELPER,
  version: '1700000350.000000',
  asReply: 'Also the SDK &amp; the CLI',
  asInstruction: 'Also the SDK &amp; the CLI',
  files: [],
  ...fields,
});
const deletion = (fields: Partial<DeleteRequest> = {}): DeleteRequest => ({
  channelId: CHANNEL,
  threadTs: THREAD,
  messageTs: REPLY_TS,
  userId: HELPER,
  ...fields,
});
const notes = () => w.outbox().filter((r) => r.payload.type === 'ephemeral');

describe('recordEdit of a reply', () => {
  it('revises a reply still waiting, as plain text, and tells nobody', async () => {
    const { run } = await w.activeJobWithReply('pending');
    expect(await edits.recordEdit(edit())).toBe('revised');
    expect((await w.store.getRun(run.id))?.prompt).toBe('Also the SDK & the CLI');
    expect(w.outbox()).toEqual([]);
  });

  it('revises a reply ready in its batch window too', async () => {
    const { run } = await w.activeJobWithReply('ready');
    expect(await edits.recordEdit(edit())).toBe('revised');
    expect((await w.store.getRun(run.id))?.prompt).toBe('Also the SDK & the CLI');
  });

  it('sees the same edit again as unchanged', async () => {
    await w.activeJobWithReply('pending');
    await edits.recordEdit(edit());
    expect(await edits.recordEdit(edit())).toBe('unchanged');
  });

  it('lists the files the edited message carries in what is sent, counted against the limit', async () => {
    const files = [{ name: 'a.pdf', type: 'pdf' }];
    const { run } = await w.activeJobWithReply('pending');
    // A short text whose list of files takes it past the 40 characters allowed.
    expect(await edits.recordEdit(edit({ asReply: 'See', files }))).toBe('refused');

    await w.store.close();
    w = createJobWorld();
    edits = recording(w);
    const { run: roomy } = await w.activeJobWithReply('pending');
    expect(roomy.id).toBe(run.id);
    expect(await edits.recordEdit(edit({ asReply: 'See', files }))).toBe('revised');
    const prompt = (await w.store.getRun(roomy.id))?.prompt ?? '';
    expect(prompt.startsWith('See\n')).toBe(true);
    expect(prompt).toContain('- a.pdf (pdf)');
  });

  it('ignores edits by anyone but the author', async () => {
    const { run } = await w.activeJobWithReply('pending');
    expect(await edits.recordEdit(edit({ userId: 'U0SOMEONE' }))).toBe('ignored');
    expect((await w.store.getRun(run.id))?.prompt).toBe('Also the SDK');
  });

  it('tells the author privately, once per version, that a reply the agent has cannot be changed', async () => {
    const { run } = await w.activeJobWithReply('sent');
    expect(await edits.recordEdit(edit())).toBe('late');
    expect(await edits.recordEdit(edit({ asReply: 'Another try' }))).toBe('late');
    expect((await w.store.getRun(run.id))?.prompt).toBe('Also the SDK');
    expect(notes().map((n) => n.key)).toEqual([`edited-late:${run.id}:1700000350.000000`]);
    expect(notes()[0]?.payload).toMatchObject({ user: HELPER, channel: CHANNEL, threadTs: THREAD });
  });

  it('refuses an edit longer than the limit, keeping the earlier text, and says so', async () => {
    const { run } = await w.activeJobWithReply('pending');
    expect(await edits.recordEdit(edit({ asReply: 'x'.repeat(41) }))).toBe('refused');
    expect((await w.store.getRun(run.id))?.state).toBe('pending');
    expect((await w.store.getRun(run.id))?.prompt).toBe('Also the SDK');
    expect(notes().map((n) => n.key)).toEqual([`edit-refused:${run.id}:1700000350.000000`]);
  });

  it('withdraws a waiting reply edited into an aside, and tells its author', async () => {
    const { run } = await w.activeJobWithReply('pending');
    expect(await edits.recordEdit(edit({ asReply: undefined }))).toBe('withdrawn');
    expect(await w.store.getRun(run.id)).toMatchObject({ state: 'failed', error: 'withdrawn' });
    expect(notes().map((n) => n.key)).toEqual([`withdrawn:${run.id}`]);
    // Withdrawn before: a later edit finds nothing of it to change.
    expect(await edits.recordEdit(edit())).toBe('ignored');
  });
});

describe('recordEdit of a job’s first instruction', () => {
  it('revises it while the job is only recorded, the job’s instruction too', async () => {
    const { job, run } = await mentioned();
    const request = edit({ threadTs: job.threadTs ?? '', messageTs: run.messageTs ?? '', userId: REQUESTER });
    expect(await edits.recordEdit({ ...request, asInstruction: ' Document *the* limits ' })).toBe('revised');
    expect((await w.job(job.id)).instruction).toBe('Document *the* limits');
    expect((await w.store.getRun(run.id))?.prompt).toBe('Document *the* limits');
  });

  it('is too late once the job has started', async () => {
    const { job, run } = await mentioned();
    await w.store.apply({ jobId: job.id, job: { phase: 'creating' } }, w.clock.at);
    const request = edit({ threadTs: job.threadTs ?? '', messageTs: run.messageTs ?? '', userId: REQUESTER });
    expect(await edits.recordEdit(request)).toBe('late');
    expect((await w.job(job.id)).instruction).toBe('Document the limits');
  });
});

describe('recordDelete', () => {
  it('withdraws a waiting reply without a word to its author', async () => {
    const { run } = await w.activeJobWithReply('ready');
    expect(await edits.recordDelete(deletion())).toBe('withdrawn');
    expect(await w.store.getRun(run.id)).toMatchObject({ state: 'failed', error: 'withdrawn' });
    expect(w.outbox()).toEqual([]);
    expect(await edits.recordDelete(deletion())).toBe('ignored');
  });

  it('finds the message by the store’s record when Slack names neither thread nor author', async () => {
    const { run } = await w.activeJobWithReply('pending');
    expect(await edits.recordDelete(deletion({ threadTs: undefined, userId: undefined }))).toBe('withdrawn');
    expect((await w.store.getRun(run.id))?.state).toBe('failed');
  });

  it('tells the author it is too late once the agent has the reply', async () => {
    const { run } = await w.activeJobWithReply('sending');
    expect(await edits.recordDelete(deletion())).toBe('late');
    expect((await w.store.getRun(run.id))?.state).toBe('sending');
    expect(notes().map((n) => n.key)).toEqual([`deleted-late:${run.id}`]);
  });

  it('ignores the deletion of someone else’s message', async () => {
    const { run } = await w.activeJobWithReply('pending');
    expect(await edits.recordDelete(deletion({ userId: 'U0SOMEONE' }))).toBe('ignored');
    expect((await w.store.getRun(run.id))?.state).toBe('pending');
  });

  it('deleting a recorded job’s first instruction means the job never starts, and its waiting replies are told', async () => {
    const { job, run } = await mentioned();
    const request = deletion({ threadTs: undefined, messageTs: run.messageTs ?? '', userId: REQUESTER });
    expect(await edits.recordDelete(request)).toBe('withdrawn');
    expect(await w.job(job.id)).toMatchObject({ phase: 'not_started', lastError: 'withdrawn' });
    expect(dispatchReady).toHaveBeenCalledExactlyOnceWith(job.id);
  });
});

describe('editText', () => {
  it('tells the person an edit or deletion came too late to reach the agent, and what to do instead', () => {
    expect(editText.editedLate()).toBe(
      ':pencil2: The docs agent already has the earlier version of your message, so this edit does not reach it. To change course, reply in the thread with what you want now.',
    );
    expect(editText.deletedLate()).toContain('deleting it does not take it back');
    expect(editText.deletedLate()).toContain('reply in the thread with what you want now');
    expect(editText.withdrawn()).toContain('will not be sent to the agent');
    expect(editText.notRecorded()).toContain('may still get the earlier version');
  });

  it('names the length of an overlong edit and the limit', () => {
    expect(editText.editTooLong(12_345, 10_000)).toBe(
      ':straight_ruler: Your edit is 12345 characters long; the limit is 10000. The earlier version is what the docs agent gets.',
    );
  });
});
