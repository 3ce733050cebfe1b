import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { createRetentionSweep, DAY_MS } from '../../src/store/retention.js';
import type { Store } from '../../src/store/types.js';
import { PROJECT_ID } from '../helpers/agent-stand-in.js';
import { type Harness, startHarness, stopChecked } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { buttonClick, PANE_DM, paneEvent } from '../helpers/payloads.js';

/**
 * The assistant pane's channel, recorded with the instruction: the project a job runs on and
 * every access check of it (its start, "Try again") use the channel the pane was beside when the
 * instruction was accepted, wherever the pane has moved since.
 */

let h: Harness;
afterEach(() => stopChecked(h));

/** Only C0API is served, on its own project; direct messages only beside it (ALLOW_DIRECT_MESSAGES unset). */
const ENV = { CHANNEL_PROJECTS: 'C0API:api-docs', ALLOWED_CHANNEL_IDS: 'C0API' };
const PROJECTS = { projects: [PROJECT_ID, 'api-docs'] };
let counter = 0;
const nextTs = () => `1700000700.${String(++counter).padStart(6, '0')}`;

const paneMessage = (text: string, threadTs: string) => ({
  channel: PANE_DM,
  channel_type: 'im',
  text,
  ts: nextTs(),
  thread_ts: threadTs,
});

/**
 * The store, with the start of accepted jobs held back (their first read) until `release`:
 * what happens between accepting an instruction and starting its job, made to happen there.
 */
function heldStarts() {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = { holding: true, reached: 0 };
  return {
    state,
    release: () => {
      state.holding = false;
      release();
    },
    wrap: (store: Store): Store =>
      new Proxy(store, {
        get(target, key, receiver) {
          if (key !== 'getJob') return Reflect.get(target, key, receiver);
          return async (jobId: number) => {
            if (state.holding) {
              state.reached += 1;
              await released;
            }
            return target.getJob(jobId);
          };
        },
      }),
  };
}

/** Sends an instruction in the pane beside `before`, moves the pane beside `after` before its job starts. */
async function movedBeforeStart(before: string, after: string) {
  const held = heldStarts();
  h = await startHarness(ENV, { ...PROJECTS, wrapStore: held.wrap });
  const thread = nextTs();
  await h.anyEvent(paneEvent('started', thread, before));
  expect((await h.event(paneMessage('Document the pagination cursor', thread))).status).toBe(200);
  await waitFor('the job about to start', () => held.state.reached > 0);
  await h.anyEvent(paneEvent('context_changed', thread, after));
  expect(await h.app.store.assistantThread(PANE_DM, thread)).toEqual({ contextChannelId: after });
  held.release();
  return thread;
}

describe('an instruction in the assistant pane, the pane moved before its job starts', () => {
  it('accepted beside a channel that is not served: refused, and run on no project', async () => {
    const thread = await movedBeforeStart('C0RANDOM', 'C0API');
    const refusal = await waitFor('refused', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(String(refusal.args.text)).toContain('not enabled in this channel');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
    expect(await h.app.store.findJobByThread(PANE_DM, thread)).toMatchObject({
      phase: 'not_started',
      contextChannelId: 'C0RANDOM',
    });
  });

  it('accepted beside a served channel: runs, on that channel’s project', async () => {
    const thread = await movedBeforeStart('C0API', 'C0RANDOM');
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    expect(h.agent.requestsFor('create')[0]?.projectId).toBe('api-docs');
    await h.settled();
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(0);
    expect(await h.app.store.findJobByThread(PANE_DM, thread)).toMatchObject({
      projectId: 'api-docs',
      contextChannelId: 'C0API',
    });
  });
});

describe('"Try again" on a job started in the assistant pane', () => {
  it('beside a served channel, with direct messages otherwise refused: starts the job again there', async () => {
    h = await startHarness(ENV, PROJECTS);
    const thread = nextTs();
    await h.anyEvent(paneEvent('started', thread, 'C0API'));
    await h.event(paneMessage('Document the pagination cursor', thread));
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    const job = await waitFor('job active', async () => {
      const j = await h.app.store.findJobByThread(PANE_DM, thread);
      return j?.phase === 'active' ? j : undefined;
    });
    h.agent.setStatus(job.agentJobId ?? '', 'failed');
    const card = await waitFor('"Try again" on the card', () =>
      h.slack.messages.find(
        (m) =>
          m.ts === job.cardTs &&
          JSON.stringify(m.blocks ?? []).includes('"action_id":"retry_job"') &&
          m.text.includes('Failed'),
      ),
    );
    // The pane has moved on since; the job keeps the channel it was asked beside.
    await h.anyEvent(paneEvent('context_changed', thread, 'C0RANDOM'));

    const click = buttonClick(
      { action_id: 'retry_job', value: String(job.id) },
      { channel: PANE_DM, messageTs: card.ts, responseUrl: h.slack.responseUrl('pane-retry') },
    );
    expect((await h.interact(click)).status).toBe(200);
    await waitFor('second create call', () => h.agent.requestsFor('create').length === 2);
    expect(h.agent.requestsFor('create')[1]?.projectId).toBe('api-docs');
    await h.settled();
    expect(h.slack.responses).toEqual([]);
    expect(await h.app.store.findJobByThread(PANE_DM, thread)).toMatchObject({
      privacy: 'pane',
      contextChannelId: 'C0API',
      projectId: 'api-docs',
    });
  });
});

describe('a pane left open beside a channel longer than RETENTION_DAYS', () => {
  it('keeps the thread the sweep would forget while it is still used; forgets one left idle', async () => {
    h = await startHarness(ENV, PROJECTS);
    const long = Date.now() - 60 * DAY_MS;
    const used = nextTs();
    const idle = nextTs();
    // Opened two months ago; Slack has said nothing of either thread since.
    await h.anyEvent(paneEvent('started', used, 'C0API', { eventTs: String(long / 1000) }));
    await h.anyEvent(paneEvent('started', idle, 'C0API', { eventTs: String(long / 1000) }));
    await h.event(paneMessage('Document the pagination cursor', used));
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    await h.settled();
    const logger = createLogger({ level: 'error', secrets: [], write: () => {} });
    const sweep = createRetentionSweep({ store: h.app.store, logger, retentionDays: 30 });
    expect((await sweep.sweep()).assistantThreads).toBe(1);
    expect(await h.app.store.assistantThread(PANE_DM, idle)).toBeUndefined();
    // Its next message still works for the channel the pane is beside (under the allow-list).
    expect(await h.app.store.assistantThread(PANE_DM, used)).toEqual({ contextChannelId: 'C0API' });
  });
});
