import { describe, expect, it } from 'vitest';
import { PROJECT_ID } from '../helpers/agent-stand-in.js';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';

/**
 * Slack's agent messaging experience (manifest `agent_view`): conversations happen in threads of
 * the bot's Messages tab; `app_home_opened` with tab `messages` replaces
 * `assistant_thread_started`, and `app_context_changed` replaces
 * `assistant_thread_context_changed` (its context is the conversation's, not a thread's).
 */

const DM = 'D0ALICE';
/** Only C0API is served, on its own project; direct messages only beside it (ALLOW_DIRECT_MESSAGES unset). */
const h = useHarness(
  { CHANNEL_PROJECTS: 'C0API:api-docs', ALLOWED_CHANNEL_IDS: 'C0API' },
  { projects: [PROJECT_ID, 'api-docs'] },
);
let counter = 0;
const nextTs = () => `1700000800.${String(++counter).padStart(6, '0')}`;

/** `app_context_changed` as Slack documents it: the person looks at `beside` with the Messages tab open. */
const contextChanged = (beside: string) => ({
  type: 'app_context_changed',
  channel: DM,
  user: 'U0ALICE',
  context: { entities: [{ type: 'slack#/types/channel_id', value: beside, team_id: 'T0TEST' }] },
  event_ts: String(Date.now() / 1000),
});

describe('agent messaging', () => {
  it('shows the suggested prompts for the conversation when the Messages tab opens', async () => {
    await h.anyEvent({
      type: 'app_home_opened',
      user: 'U0ALICE',
      channel: DM,
      tab: 'messages',
      event_ts: '1.2',
    });
    const call = await waitFor(
      'prompts set',
      () => h.slack.callsTo('assistant.threads.setSuggestedPrompts')[0],
    );
    expect(call.args.channel_id).toBe(DM);
    // Slack ignores a call that names a thread in agent messaging.
    expect(call.args).not.toHaveProperty('thread_ts');
    expect(h.slack.callsTo('views.publish')).toHaveLength(0);
  });

  it('runs a job asked in the Messages tab on the project of the channel it is beside', async () => {
    await h.anyEvent(contextChanged('C0API'));
    const ts = nextTs();
    expect((await h.event({ channel: DM, channel_type: 'im', text: 'Document the cursor', ts })).status).toBe(
      200,
    );
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    expect(h.agent.requestsFor('create')[0]?.projectId).toBe('api-docs');
    expect(await h.app.store.findJobByThread(DM, ts)).toMatchObject({
      privacy: 'pane',
      contextChannelId: 'C0API',
      projectId: 'api-docs',
    });
    // Its thread is a session like any job's.
    await waitFor('session', () => h.slack.sessionOf(DM, ts)?.status === 'processing');
  });

  it('refuses a job asked beside a channel that is not served, as the assistant pane does', async () => {
    await h.anyEvent(contextChanged('C0RANDOM'));
    const ts = nextTs();
    await h.event({ channel: DM, channel_type: 'im', text: 'Document the cursor', ts });
    const refusal = await waitFor('refused', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(String(refusal.args.text)).toContain('not enabled in this channel');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('with Slack’s documented shapes (no conversation in the event, the context on the message): runs beside that channel', async () => {
    // docs.slack.dev, "app_context_changed event": only `type` and `context`, nothing naming the
    // conversation; Slack sends the same context with each message as `app_context`.
    const context = { entities: [{ type: 'slack#/types/channel_id', value: 'C0API', team_id: 'T0TEST' }] };
    expect((await h.anyEvent({ type: 'app_context_changed', context })).status).toBe(200);
    const ts = nextTs();
    await h.event({ channel: DM, channel_type: 'im', text: 'Document the cursor', ts, app_context: context });
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    expect(h.agent.requestsFor('create')[0]?.projectId).toBe('api-docs');
    expect(await h.app.store.findJobByThread(DM, ts)).toMatchObject({
      privacy: 'pane',
      contextChannelId: 'C0API',
      projectId: 'api-docs',
    });
    expect(h.logs.filter((l) => l.includes('app_context_changed') && /"level":"warn"/.test(l))).toEqual([]);
  });

  it('refuses a job whose message was written beside a channel that is not served', async () => {
    const ts = nextTs();
    await h.event({
      channel: DM,
      channel_type: 'im',
      text: 'Document the cursor',
      ts,
      app_context: { entities: [{ type: 'slack#/types/channel_id', value: 'C0RANDOM', team_id: 'T0TEST' }] },
    });
    const refusal = await waitFor('refused', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(String(refusal.args.text)).toContain('not enabled in this channel');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });
});
