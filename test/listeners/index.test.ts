import { readFileSync } from 'node:fs';
import type { App } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { parse } from 'yaml';
import { RETRY_ACTION_ID } from '../../src/blocks/status-card.js';
import { FEEDBACK_ACTION_ID, WHAT_TO_FIX_ACTION_ID } from '../../src/features/feedback/buttons.js';
import {
  BLOCK,
  INPUT_ACTION,
  MODAL_CALLBACK_ID,
  SHORTCUT_CALLBACK_ID,
} from '../../src/features/shortcut/modal.js';
import { installationIdOf, learnInstallation, registerListeners } from '../../src/listeners/index.js';
import { WHOLE_CONVERSATION } from '../../src/store/areas.js';
import { TEAM } from '../helpers/fake-network.js';
import { CHANNEL } from '../helpers/job-world.js';
import { type ListenerApp, startListenerApp } from '../helpers/listener-app.js';
import { createListenerWorld, type ListenerWorld } from '../helpers/listener-deps.js';
import {
  appMention,
  buttonClick,
  messageChanged,
  messageShortcut,
  minimalDeletion,
  PANE_DM,
  paneEvent,
  paneMessage,
} from '../helpers/payloads.js';
import { BOT_USER_ID } from '../helpers/slack-stand-in.js';
import { functionExecuted, userContext } from '../helpers/workflow-steps.js';

/** What the manifest tells Slack this app answers. */
const manifest = parse(readFileSync(new URL('../../manifest.yml', import.meta.url), 'utf8')) as {
  features: { slash_commands: { command: string }[]; shortcuts: { callback_id: string }[] };
  settings: { event_subscriptions: { bot_events: string[] } };
  functions: Record<string, unknown>;
};

/** A step execution's token, as Slack sends it with `function_executed`. */
const STEP_TOKEN = 'xwfp-test-not-a-real-token';

// One app for the whole file, as the app builds it: each test works in a conversation of its own.
let w: ListenerWorld;
let app: ListenerApp;
/** Where the steps keep each execution's token, to answer it with. */
const remember = vi.fn();
beforeAll(async () => {
  w = createListenerWorld();
  w.deps.steps = { remember };
  app = await startListenerApp(w, registerListeners);
});
afterAll(async () => {
  await app.stop();
  await w.stop();
});

const delivered = async (res: Response) => {
  expect(res.status).toBe(200);
  await w.idle();
};
const jobsOf = (requesterId: string) => w.store.recentJobs({ requesterId }, 5);

/** A reply in the thread of a job running in `channelId`; the job's runs after it arrived. */
async function replyInThread(channelId: string, channelType: string) {
  const { job } = await w.activeJob({ channelId });
  const ts = `1700000300.${channelId.length}0001`;
  await delivered(
    await app.event({
      type: 'message',
      channel: channelId,
      channel_type: channelType,
      user: 'U0HELPER',
      text: `Also cover ${channelType}`,
      ts,
      thread_ts: job.threadTs,
      event_ts: ts,
    }),
  );
  return (await w.runs(job.id)).map((r) => r.prompt);
}

/** The send-to-agent modal submitted by `user`, as Slack sends it, about a message in `CHANNEL`. */
function modalSubmission(user: string, viewId: string, instruction: string) {
  const input = (value: Record<string, unknown>) => ({ [INPUT_ACTION]: value });
  return {
    type: 'view_submission',
    team: { id: TEAM },
    user: { id: user, team_id: TEAM },
    api_app_id: 'A0APP',
    trigger_id: `trigger.${viewId}`,
    view: {
      id: viewId,
      type: 'modal',
      callback_id: MODAL_CALLBACK_ID,
      team_id: TEAM,
      private_metadata: JSON.stringify({ channel: CHANNEL, ts: '1700000200.000200', author: 'U0AUTHOR' }),
      state: {
        values: {
          [BLOCK.instruction]: input({ type: 'plain_text_input', value: instruction }),
          [BLOCK.message]: input({ type: 'plain_text_input', value: 'How do I rotate keys?' }),
          [BLOCK.channel]: input({ type: 'conversations_select', selected_conversation: CHANNEL }),
        },
      },
    },
  };
}

/** What the table registers with Bolt, read off an app that only records it: the actions, by id. */
function registered() {
  const actions = new Map<string, (args: { ack: () => Promise<void> }) => Promise<void>>();
  const recorder = new Proxy(
    {},
    {
      get: (_, method) => (id: string, handler: never) => {
        if (method === 'action') actions.set(id, handler);
      },
    },
  );
  registerListeners(recorder as App, w.deps);
  return { actions };
}

/** For each event the manifest subscribes to: one delivery of it, and what it must have done. */
const BOT_EVENTS: Record<string, () => Promise<void>> = {
  async app_mention() {
    const mention = {
      ...appMention({ text: `<@${BOT_USER_ID}> Document the CLI`, user: 'U0MENTION' }),
      channel: 'C0MENTION',
    };
    await delivered(await app.event(mention));
    expect(await jobsOf('U0MENTION')).toEqual([
      expect.objectContaining({ origin: 'mention', threadTs: mention.ts }),
    ]);
  },
  async app_home_opened() {
    await delivered(
      await app.event({ type: 'app_home_opened', user: 'U0HOME', channel: 'D0HOME', tab: 'home' }),
    );
    expect(w.slack.publishHome).toHaveBeenCalledWith('U0HOME', expect.objectContaining({ type: 'home' }));
  },
  async 'message.channels'() {
    expect(await replyInThread('C0PUBLIC', 'channel')).toContain('Also cover channel');
  },
  async 'message.groups'() {
    expect(await replyInThread('G0PRIVATE', 'group')).toContain('Also cover group');
  },
  async 'message.im'() {
    const ts = '1700000400.000001';
    await delivered(
      await app.event({
        type: 'message',
        channel: 'D0DM',
        channel_type: 'im',
        user: 'U0DM',
        text: 'Document it',
        ts,
      }),
    );
    expect(await jobsOf('U0DM')).toEqual([expect.objectContaining({ origin: 'direct', threadTs: ts })]);
  },
  async function_executed() {
    const callbackIds = Object.keys(manifest.functions);
    expect(callbackIds.length).toBeGreaterThan(0);
    for (const callbackId of callbackIds) {
      const executionId = `Fx0${callbackId}`;
      const inputs = { instruction: 'Document it', channel_id: 'C0STEP', user_id: 'U0STEP', job_id: 1 };
      await delivered(
        await app.event(functionExecuted({ callbackId, executionId, inputs, token: 'xwfp-test-0' })),
      );
      expect(JSON.stringify(w.outbox()) + JSON.stringify(await jobsOf('U0STEP'))).toContain(executionId);
    }
  },
  async app_context_changed() {
    const entities = [{ type: 'slack#/types/channel_id', value: 'C0API' }];
    await delivered(
      await app.event({ type: 'app_context_changed', channel: 'D0CTX', context: { entities } }),
    );
    expect(await w.store.assistantThread('D0CTX', WHOLE_CONVERSATION)).toEqual({ contextChannelId: 'C0API' });
  },
  // The stop feature's (src/features/stop/), registered in this table.
  async agent_session_stopped() {
    const { job } = await w.activeJob({ channelId: 'C0STOP' });
    const event = {
      type: 'agent_session_stopped',
      channel: 'C0STOP',
      user: job.requesterId,
      thread_ts: job.threadTs,
      streaming_message_ts: [],
    };
    await delivered(await app.event({ ...event, event_ts: '1783536983.000001' }));
    expect((await w.job(job.id)).stoppedRun).toBe(job.runCount);
  },
};

describe('registerListeners', () => {
  it('routes every event the manifest subscribes to', async () => {
    const subscribed = manifest.settings.event_subscriptions.bot_events;
    expect(Object.keys(BOT_EVENTS).sort()).toEqual([...subscribed].sort());
    for (const event of subscribed) await (BOT_EVENTS[event] as () => Promise<void>)();
  });

  it('answers the manifest’s slash command', async () => {
    expect(manifest.features.slash_commands.length).toBeGreaterThan(0);
    for (const { command } of manifest.features.slash_commands) {
      const res = await app.command({ command, text: 'help' });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { text: string }).text).toContain(`${command} list`);
    }
  });

  it('answers /docs-agent through the receiver, in the acknowledgement, privately', async () => {
    const res = await app.command({ text: 'help' });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { response_type: string; text: string };
    expect(answer.response_type).toBe('ephemeral');
    expect(answer.text).toContain('/docs-agent list');
  });

  it('answers the command under any name a workspace gave it', async () => {
    for (const command of ['/docs-agent-staging', '/docs']) {
      const res = await app.command({ command, text: 'help' });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { text: string }).text).toContain('/docs-agent list');
    }
  });

  it('records a command’s instruction before the receiver answers Slack', async () => {
    const res = await app.command({ text: 'Document the rate limits', user_id: 'W0GRIDUSER' });
    expect(res.status).toBe(200);
    expect(await jobsOf('W0GRIDUSER')).toEqual([
      expect.objectContaining({ origin: 'command', instruction: 'Document the rate limits' }),
    ]);
    await w.idle();
  });

  it('a command it cannot read is still answered, with a clear message', async () => {
    const res = await app.command({ text: 'Document the rate limits', user_id: 'U0UNREAD', trigger_id: '' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { text: string }).text).toContain('could not read that command');
    expect(await jobsOf('U0UNREAD')).toEqual([]);
  });

  it('routes the manifest’s shortcut, and the submission of the modal it opens', async () => {
    expect(manifest.features.shortcuts.length).toBeGreaterThan(0);
    for (const { callback_id } of manifest.features.shortcuts) {
      const shortcut = {
        ...messageShortcut({ ts: '1700000200.000200', text: 'How do I rotate keys?' }),
        callback_id,
      };
      expect((await app.interact(shortcut)).status).toBe(200);
    }
    const view = w.slack.openView.mock.calls[0]?.[1] as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(MODAL_CALLBACK_ID);
    const input = (value: Record<string, unknown>) => ({ [INPUT_ACTION]: value });
    const submission = {
      type: 'view_submission',
      team: { id: TEAM },
      user: { id: 'U0MODAL', team_id: TEAM },
      view: {
        ...view,
        id: 'V0MODAL',
        state: {
          values: {
            [BLOCK.instruction]: input({ value: 'Write a guide' }),
            [BLOCK.message]: input({ value: 'How do I rotate keys?' }),
            [BLOCK.channel]: input({ selected_conversation: 'C0GENERAL' }),
          },
        },
      },
    };
    await delivered(await app.interact(submission));
    expect(await jobsOf('U0MODAL')).toEqual([expect.objectContaining({ origin: 'shortcut' })]);
  });

  it('opens the shortcut’s modal with its trigger, prefilled with the message', async () => {
    const shortcut = messageShortcut({ ts: '1700000250.000250', text: 'Where is the SDK changelog?' });
    expect(shortcut.callback_id).toBe(SHORTCUT_CALLBACK_ID);
    const res = await app.interact(shortcut);
    expect(res.status).toBe(200);
    const [trigger, view] = w.slack.openView.mock.calls.at(-1) ?? [];
    expect(trigger).toBe(shortcut.trigger_id);
    expect(view).toMatchObject({ type: 'modal', callback_id: MODAL_CALLBACK_ID });
    expect(JSON.stringify(view)).toContain('Where is the SDK changelog?');
  });

  it('answers the shortcut before views.open has answered: the acknowledgement never waits for the modal', async () => {
    let answerOpen = () => {};
    w.slack.openView.mockImplementationOnce(
      () => new Promise<void>((resolve) => (answerOpen = () => resolve())),
    );
    const shortcut = messageShortcut({ ts: '1700000300.000300', text: 'Where are the webhook docs?' });
    const sent = app.interact(shortcut);
    // Slack waits 3 seconds; a listener that waits for views.open is not answered by then.
    const first = await Promise.race([
      sent.then(() => 'answered' as const),
      new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 2_500)),
    ]);
    answerOpen();
    expect(first).toBe('answered');
    expect((await sent).status).toBe(200);
    expect(w.slack.openView.mock.calls.at(-1)?.[0]).toBe(shortcut.trigger_id);
  });

  it('closes the modal only once its job is recorded, and answers a refused one inside it', async () => {
    const submit = (user: string, viewId: string, instruction: string) =>
      app.interact(modalSubmission(user, viewId, instruction));
    const res = await submit('U0ALICE', 'V0SUBMIT1', 'Write a guide');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(await jobsOf('U0ALICE')).toEqual([
      expect.objectContaining({ origin: 'shortcut', instruction: 'Write a guide' }),
    ]);
    await w.idle();
    const refused = await submit('U0BOB', 'V0SUBMIT2', '   ');
    expect(refused.status).toBe(200);
    const answer = (await refused.json()) as { response_action: string; errors: Record<string, string> };
    expect(answer.response_action).toBe('errors');
    expect(answer.errors[BLOCK.instruction]).toContain('Write what the docs agent should do');
    expect(await jobsOf('U0BOB')).toEqual([]);
  });

  it('routes the two Workflow Builder steps the manifest declares', () => {
    expect(Object.keys(manifest.functions).sort()).toEqual([
      'start_docs_agent_job',
      'wait_for_docs_agent_job',
    ]);
  });

  it('routes "Start a docs agent job": recorded before the receiver answers, its token kept', async () => {
    const res = await app.event(
      functionExecuted({
        callbackId: 'start_docs_agent_job',
        executionId: 'Fx0ROUTED1',
        inputs: {
          instruction: 'Document the CLI',
          channel_id: CHANNEL,
          user_context: userContext('W0STEPUSER'),
        },
        token: STEP_TOKEN,
      }),
    );
    expect(res.status).toBe(200);
    expect(await jobsOf('W0STEPUSER')).toEqual([
      expect.objectContaining({ origin: 'workflow', triggerKey: expect.stringContaining('Fx0ROUTED1') }),
    ]);
    expect(remember).toHaveBeenCalledWith('Fx0ROUTED1', STEP_TOKEN, expect.any(Number));
    await w.idle();
  });

  it('routes "Wait for a docs agent job": recorded as waiting before the receiver answers', async () => {
    const res = await app.event(
      functionExecuted({
        callbackId: 'wait_for_docs_agent_job',
        executionId: 'Fx0ROUTED2',
        inputs: { job_id: 41 },
        token: STEP_TOKEN,
      }),
    );
    expect(res.status).toBe(200);
    expect(w.outbox().map((r) => r.payload)).toContainEqual(
      expect.objectContaining({ type: 'await_job', executionId: 'Fx0ROUTED2', job: 41 }),
    );
  });

  it('acknowledges every button the bot’s messages carry (Bolt answers an unrouted click 404)', async () => {
    for (const [action_id, value] of [
      ['view_pull_request', 'https://github.com/example/docs/pull/1'],
      [RETRY_ACTION_ID, '999'],
      [FEEDBACK_ACTION_ID, 'positive:999:1'],
    ] as const) {
      const click = buttonClick({ action_id, value }, { messageTs: '1700000000.000900' });
      expect((await app.interact(click)).status).toBe(200);
    }
  });

  it('acknowledges a click on “View pull request” with no words, so Slack shows the person no warning', async () => {
    const { actions } = registered();
    const ack = vi.fn(async () => {});
    await actions.get('view_pull_request')?.({ ack });
    expect(ack).toHaveBeenCalledOnce();
    expect(ack).toHaveBeenCalledWith();
  });

  it('routes exactly the buttons the bot’s messages carry', () => {
    expect([...registered().actions.keys()].sort()).toEqual(
      ['view_pull_request', FEEDBACK_ACTION_ID, WHAT_TO_FIX_ACTION_ID, RETRY_ACTION_ID].sort(),
    );
  });

  it('hands a press of the feedback buttons to the feedback feature, which records the vote', async () => {
    const { job, run } = await w.jobWithOutcome({ channelId: 'C0FEEDBACK' });
    const click = buttonClick(
      { action_id: FEEDBACK_ACTION_ID, value: `negative:${job.id}:${run.seq}` },
      { channel: 'C0FEEDBACK', messageTs: '1700000000.000950', user: 'U0VOTER' },
    );
    const press = { ...click, actions: [{ ...click.actions[0], type: 'feedback_buttons' }] };
    await delivered(await app.interact(press));
    expect(await w.store.feedbackTotals()).toEqual({ positive: 0, negative: 1, reasons: 0 });
  });

  it('a threaded direct message is taken once, though two listeners read direct messages', async () => {
    const accept = vi.spyOn(w.deps.jobs, 'recordMessage');
    onTestFinished(() => accept.mockRestore());
    const root = {
      type: 'message',
      channel: 'D0ONCE',
      channel_type: 'im',
      user: 'U0ONCE',
      text: 'Document it',
    };
    await delivered(await app.event({ ...root, ts: '1700000800.000001' }));
    await delivered(
      await app.event({
        ...root,
        text: 'Also the CLI',
        ts: '1700000800.000002',
        thread_ts: '1700000800.000001',
      }),
    );
    expect(accept).toHaveBeenCalledTimes(2);
  });

  it('learns the installing workspace from every request before its listener runs', async () => {
    const noted = vi.spyOn(w.identity, 'noteInstallation');
    onTestFinished(() => noted.mockRestore());
    const res = await app.json({
      type: 'event_callback',
      team_id: 'T0AUTHOR',
      event_id: 'Ev0INSTALL',
      authorizations: [{ team_id: 'E0GRID', user_id: BOT_USER_ID, is_bot: true }],
      event: { type: 'app_home_opened', user: 'U0GRIDHOME', channel: 'D0GRID', tab: 'home' },
    });
    await delivered(res);
    expect(noted).toHaveBeenCalledWith('E0GRID');
    expect(w.slack.publishHome).toHaveBeenCalledWith('U0GRIDHOME', expect.anything());
  });
});

describe('registerListeners: each event to its feature', () => {
  it('routes a reply in a job’s thread to the job, as a follow-up', async () => {
    const { job, threadTs } = await w.jobWithWaitingReply('C0REPLIES', '1700000300.000001');
    const res = await app.event({
      type: 'message',
      channel: 'C0REPLIES',
      channel_type: 'channel',
      user: 'W0GRIDUSER',
      text: 'Also mention the rate limits',
      ts: '1700000300.000002',
      thread_ts: threadTs,
      event_ts: '1700000300.000002',
    });
    await delivered(res);
    expect((await w.runs(job.id)).map((r) => r.prompt)).toContain('Also mention the rate limits');
  });

  it('routes an edit of a waiting reply: its new text replaces the old', async () => {
    const { threadTs, reply } = await w.jobWithWaitingReply('C0EDITS', '1700000500.000001');
    await delivered(
      await app.event(
        messageChanged({
          channel: 'C0EDITS',
          ts: '1700000500.000001',
          thread_ts: threadTs,
          user: 'U0HELPER',
          text: 'Also cover the CLI',
          previous: 'Also cover the SDK',
        }),
      ),
    );
    expect(await reply()).toMatchObject({ prompt: 'Also cover the CLI' });
  });

  it('routes a deletion Slack sends in its smallest form (no previous_message): the waiting reply is withdrawn', async () => {
    const { reply } = await w.jobWithWaitingReply('C0DELETES', '1700000600.000001');
    await delivered(await app.event(minimalDeletion('C0DELETES', '1700000600.000001')));
    expect(await reply()).toMatchObject({ state: 'failed', error: 'withdrawn' });
  });

  it('answers an event it does not listen to, and an unreadable one, without a failure', async () => {
    await delivered(await app.event({ type: 'reaction_added', user: 'U0ALICE', reaction: 'eyes' }));
    await delivered(await app.event({ type: 'app_mention', user: 42, team: null }));
    expect(w.logged('error', 'unhandled error in a listener')).toEqual([]);
  });

  it('a message in the pane’s thread reaches the direct-message listener: a job beside the pane’s channel', async () => {
    const thread = '1729999327.300001';
    await app.event(paneEvent('started', thread, 'C0API'));
    const res = await app.event(paneMessage('1729999327.300002', 'Document the rate limits', thread));
    expect(res.status).toBe(200);
    const [job] = await w.store.recentJobs({ requesterId: 'U0ALICE' }, 5);
    expect(job).toMatchObject({
      origin: 'direct',
      threadTs: thread,
      privacy: 'pane',
      contextChannelId: 'C0API',
    });
    await w.idle();
  });

  it('screens assistant events before Bolt’s Assistant: one whose thread cannot be read is answered 200 and logged, never a server error', async () => {
    const res = await app.event(
      {
        type: 'assistant_thread_started',
        assistant_thread: { user_id: 'U0ALICE', channel_id: PANE_DM },
        event_ts: '1.2',
      },
      { event_id: 'Ev0NOTHREAD' },
    );
    expect(res.status).toBe(200);
    expect(w.logged('warn', 'assistant event not understood')).toHaveLength(1);
    expect(w.logged('error', 'unhandled error in a listener')).toEqual([]);
  });
});

type Args = Parameters<ReturnType<typeof learnInstallation>>[0];

/** Runs the middleware on `body` as Bolt would; returns what it noted and whether it went on. */
async function run(body: unknown) {
  const identity = { noteInstallation: vi.fn() };
  const next = vi.fn(async () => {});
  await learnInstallation(identity)({ body, next, context: {}, logger: {}, client: {} } as unknown as Args);
  return { noted: identity.noteInstallation.mock.calls.map((c) => c[0]), next };
}

const auth = (fields: Record<string, unknown>) => ({
  authorizations: [{ is_bot: true, team_id: 'T0TEST', ...fields }],
});

describe('learnInstallation', () => {
  it('notes the workspace of the request’s bot authorization, then runs the listener', async () => {
    const { noted, next } = await run({ team_id: 'T0AUTHOR', ...auth({}) });
    expect(noted).toEqual(['T0TEST']);
    expect(next).toHaveBeenCalledOnce();
  });

  it('takes an Enterprise Grid organisation id too', async () => {
    expect(installationIdOf(auth({ team_id: 'E0GRID' }))).toBe('E0GRID');
  });

  it('notes the organisation of an organisation-wide install, whose authorization names no workspace', async () => {
    // As Slack's organisation-wide apps reference shows an event's authorizations.
    const { noted } = await run({
      team_id: 'T0ACMEDOCS',
      enterprise_id: 'E0ACME',
      authorizations: [
        {
          enterprise_id: 'E0ACME',
          team_id: null,
          user_id: 'W0BOT',
          is_bot: true,
          is_enterprise_install: true,
        },
      ],
    });
    expect(noted).toEqual(['E0ACME']);
  });

  it('notes the workspace of a single-workspace install in a Grid organisation', async () => {
    const { noted } = await run(
      auth({ team_id: 'T0ACMEDOCS', enterprise_id: 'E0ACME', is_enterprise_install: false }),
    );
    expect(noted).toEqual(['T0ACMEDOCS']);
  });

  it.each([
    ['no authorizations (a command or an interaction)', { team_id: 'T0TEST' }],
    ['only a user’s authorization', { authorizations: [{ is_bot: false, team_id: 'T0TEST' }] }],
    ['a team id that is not one', auth({ team_id: 'not-a-team' })],
    [
      'an organisation-wide authorization without an organisation',
      auth({ team_id: null, enterprise_id: null, is_enterprise_install: true }),
    ],
    ['a team id that is not a string', auth({ team_id: 42 })],
    ['authorizations that are not a list', { authorizations: { is_bot: true, team_id: 'T0TEST' } }],
    ['a malformed entry', { authorizations: [null] }],
  ])('notes nothing for %s, and still runs the listener', async (_what, body) => {
    const { noted, next } = await run(body);
    expect(noted).toEqual([]);
    expect(next).toHaveBeenCalledOnce();
  });
});
