import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, stopChecked } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import {
  appMention,
  eventEnvelope,
  messageChanged,
  messageDeleted,
  minimalDeletion,
} from '../helpers/payloads.js';
import { postSigned, SIGNING_SECRET } from '../helpers/signing.js';
import { BOT_ID, BOT_USER_ID } from '../helpers/slack-stand-in.js';

let h: Harness;
afterEach(() => stopChecked(h));

/** Any event, signed, under a chosen event id (Slack's retries keep theirs). */
const send = (event: Record<string, unknown>, eventId?: string) =>
  postSigned(h.base(), eventEnvelope(event, eventId ? { event_id: eventId } : {}), {
    contentType: 'application/json',
    secret: SIGNING_SECRET,
  });

const ephemeralsTo = (user: string) =>
  h.slack.callsTo('chat.postEphemeral').filter((c) => c.args.user === user);

let serial = 0;
const nextTs = () => `1700000700.${String(++serial).padStart(6, '0')}`;

/** Bob's reply in a job's thread: where it is and its ts. */
type Reply = { channel: string; threadTs: string; ts: string };

/** A new harness (`env`) with a job whose thread has Bob's reply `text` in it. */
async function jobWithReply(env: Record<string, string>, text: string, instruction?: string): Promise<Reply> {
  h = await startHarness(env);
  const { threadTs, channel } = await h.startJob(instruction ? { text: instruction } : {});
  const ts = nextTs();
  await h.event({ channel, thread_ts: threadTs, ts, user: 'U0BOB', text });
  return { channel, threadTs, ts };
}

/** Bob's edit of `reply`, from `previous` to `text`. */
const bobsEdit = (reply: Reply, text: string, previous: string, fields: Record<string, unknown> = {}) =>
  messageChanged({
    channel: reply.channel,
    ts: reply.ts,
    thread_ts: reply.threadTs,
    user: 'U0BOB',
    text,
    previous,
    ...fields,
  });

/** The agent has `reply`: the bot marked it sent. */
const sentToAgent = (reply: Reply) =>
  waitFor('follow-up sent', () =>
    h.slack.callsTo('reactions.add').some((c) => c.args.timestamp === reply.ts),
  );

/** Waits for the one follow-up the agent is sent, once all is settled, and says its prompts. */
async function followUpPrompts(): Promise<unknown[]> {
  await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
  await h.settled();
  return h.agent.requestsFor('message').map((r) => r.body);
}

/** Where another message in `reply`'s thread goes. */
const inThread = (reply: Reply) => ({ channel: reply.channel, thread_ts: reply.threadTs });

/** The run of `reply`, as the store has it. */
async function runOf(reply: Reply) {
  const job = await h.app.store.findJobByThread(reply.channel, reply.threadTs);
  const runs = await h.app.store.getRuns(job?.id ?? 0);
  return runs.find((r) => r.messageTs === reply.ts);
}

describe('a reply edited or deleted while it waits in its batch window', () => {
  it('sends the edited text instead of the first', async () => {
    const reply = await jobWithReply({ FOLLOW_UP_BATCH_MS: '700' }, 'Add a table');
    const res = await send(bobsEdit(reply, 'Add a table of limits', 'Add a table'));
    expect(res.status).toBe(200);
    expect(await followUpPrompts()).toEqual([{ prompt: 'Add a table of limits' }]);
    expect(ephemeralsTo('U0BOB')).toEqual([]);
  });

  it('takes a deleted reply out of its batch, and sends the others', async () => {
    const reply = await jobWithReply({ FOLLOW_UP_BATCH_MS: '700' }, 'Rewrite everything');
    await h.event({ ...inThread(reply), user: 'U0CARL', text: 'Fix the typo in the title' });
    await send(messageDeleted({ ...inThread(reply), ts: reply.ts, user: 'U0BOB' }));
    expect(await followUpPrompts()).toEqual([{ prompt: 'Fix the typo in the title' }]);
    expect(await runOf(reply)).toMatchObject({ state: 'failed', error: 'withdrawn' });
    // Only the other reply counts as sent; its author removed their own, so nobody is told.
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
  });

  it("takes back a reply whose deletion names only its ts (Slack's documented minimal shape)", async () => {
    const reply = await jobWithReply({ FOLLOW_UP_BATCH_MS: '700' }, 'Rewrite everything');
    await h.event({ ...inThread(reply), user: 'U0CARL', text: 'Fix the typo in the title' });
    await send(minimalDeletion(reply.channel, reply.ts));
    expect(await followUpPrompts()).toEqual([{ prompt: 'Fix the typo in the title' }]);
    expect(await runOf(reply)).toMatchObject({ state: 'failed', error: 'withdrawn' });
  });

  it('takes out a reply edited into an aside, and tells its author', async () => {
    const reply = await jobWithReply({ FOLLOW_UP_BATCH_MS: '500' }, 'Drop the FAQ');
    await send(bobsEdit(reply, '// never mind, talking to Carl', 'Drop the FAQ'));
    const note = await waitFor('private note', () => ephemeralsTo('U0BOB')[0]);
    expect(String(note.args.text)).toContain('no longer an instruction');
    // Control: a reply after it goes out alone.
    await h.event({ ...inThread(reply), user: 'U0CARL', text: 'Keep the FAQ' });
    expect(await followUpPrompts()).toEqual([{ prompt: 'Keep the FAQ' }]);
  });

  it('keeps the earlier text of an edit over the length limit, and says so', async () => {
    const reply = await jobWithReply(
      { FOLLOW_UP_BATCH_MS: '500', MAX_PROMPT_CHARS: '40' },
      'Add a table',
      'Short',
    );
    await send(bobsEdit(reply, `Add a table ${'and more '.repeat(10)}`, 'Add a table'));
    const note = await waitFor('private note', () => ephemeralsTo('U0BOB')[0]);
    expect(String(note.args.text)).toContain('the limit is 40');
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    expect(h.agent.requestsFor('message')[0]?.body).toEqual({ prompt: 'Add a table' });
  });

  it('counts the files an edit names to the agent against the length limit', async () => {
    const reply = await jobWithReply(
      { FOLLOW_UP_BATCH_MS: '500', MAX_PROMPT_CHARS: '200' },
      'Add a table',
      'Short',
    );
    // The text alone fits; with the list of its files the prompt would not.
    const files = [{ id: 'F0LIMITS', name: 'limits.pdf', filetype: 'pdf' }];
    await send(bobsEdit(reply, 'Add a table of limits', 'Add a table', { files }));
    const note = await waitFor('private note', () =>
      ephemeralsTo('U0BOB').find((c) => String(c.args.text).includes('the limit is 200')),
    );
    expect(String(note.args.text)).toMatch(/Your edit is \d+ characters long/);
    expect(await followUpPrompts()).toEqual([{ prompt: 'Add a table' }]);
  });
});

describe('a reply edited or deleted after the agent has it', () => {
  it('tells its author privately once per edited version, and sends nothing more', async () => {
    const reply = await jobWithReply({}, 'Add a table');
    await sentToAgent(reply);
    const edit = bobsEdit(reply, 'Add two tables', 'Add a table');
    await send(edit, 'Ev0EDIT');
    await waitFor('private note', () => ephemeralsTo('U0BOB').length === 1);
    // Slack delivers the same edit again (a retry, a Socket Mode duplicate).
    await send(edit, 'Ev0EDIT');
    await send(edit, 'Ev0EDIT2');
    await h.settled();
    expect(ephemeralsTo('U0BOB')).toHaveLength(1);
    const [note] = ephemeralsTo('U0BOB');
    expect(note?.args).toMatchObject(inThread(reply));
    expect(String(note?.args.text)).toContain('already has the earlier version');

    // A second edit is another version: its author hears again.
    await send(bobsEdit(reply, 'Add three tables', 'Add two tables'));
    await waitFor('second note', () => ephemeralsTo('U0BOB').length === 2);
    await send(messageDeleted({ ...inThread(reply), ts: reply.ts, user: 'U0BOB' }));
    await waitFor('note about the deletion', () => ephemeralsTo('U0BOB').length === 3);
    expect(String(ephemeralsTo('U0BOB')[2]?.args.text)).toContain('deleting it does not take it back');
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(1);
  });

  it.each([
    ['an edit by an app', { bot_id: 'B0OTHER' }],
    ["the bot's own edit (a status card update)", { user: BOT_USER_ID, bot_id: BOT_ID }],
    ['an unfurl (the text did not change)', { text: 'Add a table', previous: 'Add a table' }],
    ["someone else's edit", { user: 'U0MALLORY' }],
  ])('ignores %s', async (_what, fields) => {
    const reply = await jobWithReply({}, 'Add a table');
    await sentToAgent(reply);
    const res = await send(bobsEdit(reply, 'Something else', 'Add a table', fields));
    expect(res.status).toBe(200);
    await h.settled();
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
  });
});

describe('a mention edited or deleted before its job started', () => {
  /** A mention whose job waits (Slack cannot confirm its author yet): it stays `accepted`. */
  async function heldMention(text: string) {
    h = await startHarness();
    h.slack.outage.begin('users.info');
    const mention = appMention({ text: `<@${BOT_USER_ID}> ${text}` });
    await h.anyEvent(mention);
    await waitFor('held note', () => ephemeralsTo('U0ALICE')[0]);
    return mention;
  }

  it('starts the job with the edited instruction', async () => {
    const mention = await heldMention('Document webhooks');
    await send(
      messageChanged({
        ts: mention.ts,
        text: `<@${BOT_USER_ID}> Document webhook retries`,
        previous: mention.text,
      }),
    );
    h.slack.outage.end('users.info');
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    expect(h.agent.requestsFor('create')[0]?.body).toEqual({ prompt: 'Document webhook retries' });
    const job = await h.app.store.findJobByThread('C0GENERAL', mention.ts);
    expect(job?.instruction).toBe('Document webhook retries');
  });

  it('never starts a job whose mention was deleted', async () => {
    const mention = await heldMention('Document webhooks');
    await send(messageDeleted({ ts: mention.ts }));
    h.slack.outage.end('users.info');
    await waitFor('job withdrawn', async () => {
      const job = await h.app.store.findJobByThread('C0GENERAL', mention.ts);
      return job === undefined || job.phase === 'not_started';
    });
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
    expect(h.slack.messages.filter((m) => m.metadata?.event_type === 'docs_agent_root')).toEqual([]);
  });

  it("never starts a job whose mention's deletion names only its ts", async () => {
    const mention = await heldMention('Document webhooks');
    await send(minimalDeletion('C0GENERAL', mention.ts));
    await waitFor('job withdrawn', async () => {
      const job = await h.app.store.findJobByThread('C0GENERAL', mention.ts);
      return job?.phase === 'not_started';
    });
    h.slack.outage.end('users.info');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('never starts a job whose mention was edited down to the bare mention, and says so', async () => {
    const mention = await heldMention('Document webhooks');
    await send(messageChanged({ ts: mention.ts, text: `<@${BOT_USER_ID}>`, previous: mention.text }));
    const note = await waitFor('private note', () => ephemeralsTo('U0ALICE')[1]);
    expect(String(note.args.text)).toContain('no longer an instruction');
    h.slack.outage.end('users.info');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
    expect((await h.app.store.findJobByThread('C0GENERAL', mention.ts))?.phase).toBe('not_started');
  });

  it('tells the author once that deleting a started mention, left as a tombstone, takes nothing back', async () => {
    h = await startHarness();
    const mention = appMention({ text: `<@${BOT_USER_ID}> Document webhooks` });
    await h.anyEvent(mention);
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    // The mention has replies (the status card), so Slack keeps it as a tombstone: an "edit".
    const tombstone = {
      type: 'message',
      subtype: 'message_changed',
      hidden: true,
      channel: 'C0GENERAL',
      ts: '1700000900.000100',
      event_ts: '1700000900.000100',
      message: {
        type: 'message',
        subtype: 'tombstone',
        hidden: true,
        user: 'USLACKBOT',
        text: 'This message was deleted.',
        ts: mention.ts,
        thread_ts: mention.ts,
      },
      previous_message: {
        type: 'message',
        user: 'U0ALICE',
        text: mention.text,
        ts: mention.ts,
        thread_ts: mention.ts,
      },
    };
    await send(tombstone);
    await send(tombstone);
    const note = await waitFor('private note', () => ephemeralsTo('U0ALICE')[0]);
    expect(String(note.args.text)).toContain('deleting it does not take it back');
    await h.settled();
    expect(ephemeralsTo('U0ALICE')).toHaveLength(1);
  });

  it('tells the author the agent already has a mention edited after its job started', async () => {
    h = await startHarness();
    const mention = appMention({ text: `<@${BOT_USER_ID}> Document webhooks` });
    await h.anyEvent(mention);
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    await send(
      messageChanged({ ts: mention.ts, text: `<@${BOT_USER_ID}> Document queues`, previous: mention.text }),
    );
    const note = await waitFor('private note', () => ephemeralsTo('U0ALICE')[0]);
    expect(String(note.args.text)).toContain('already has the earlier version');
    expect(h.agent.requestsFor('create')[0]?.body).toEqual({ prompt: 'Document webhooks' });
  });
});

describe('a direct message instruction', () => {
  it('starts its job with the edited text when edited before the job started', async () => {
    h = await startHarness();
    h.slack.outage.begin('users.info');
    const ts = nextTs();
    await h.event({ channel: 'D0ALICE', channel_type: 'im', ts, text: 'Document webhooks' });
    await waitFor('held note', () => ephemeralsTo('U0ALICE')[0]);
    const edit = messageChanged({
      channel: 'D0ALICE',
      ts,
      text: 'Document webhook retries',
      previous: 'Document webhooks',
    });
    await send({ ...edit, channel_type: 'im' });
    h.slack.outage.end('users.info');
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    expect(h.agent.requestsFor('create')[0]?.body).toEqual({ prompt: 'Document webhook retries' });
  });

  it('names its files to the agent and tells its author once', async () => {
    h = await startHarness();
    const ts = nextTs();
    await h.event({
      channel: 'D0ALICE',
      channel_type: 'im',
      ts,
      text: 'Document these limits',
      files: [{ id: 'F0ONE', name: 'limits.pdf', filetype: 'pdf' }],
    });
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    expect(String(h.agent.requestsFor('create')[0]?.body?.prompt)).toContain('- limits.pdf (pdf)');
    await waitFor('private note', () => ephemeralsTo('U0ALICE').length === 1);
    await h.settled();
    expect(ephemeralsTo('U0ALICE')).toHaveLength(1);
  });
});
