import { afterEach, describe, expect, it } from 'vitest';
import type { Change, Store } from '../../src/store/types.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { appMention } from '../helpers/payloads.js';

let h: Harness;
afterEach(async () => {
  await h.stop();
});

/** The store, with the first `times` writes that record an agent run failing (a database hiccup). */
function failingRunWrites(store: Store, times: number): Store {
  let left = times;
  const fails = (change: Change) => change.incrementRunCount === true && left-- > 0;
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'apply')
        return async (change: Change, now: number) => {
          if (fails(change)) throw new Error('database is locked');
          return target.apply(change, now);
        };
      return Reflect.get(target, key, receiver);
    },
  });
}

describe('when the store fails', () => {
  it('records a job the agent accepted once the store recovers, and never says it was not started', async () => {
    h = await startHarness({}, { wrapStore: (store) => failingRunWrites(store, 2) });
    const { threadTs, channel } = await h.startJob();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    expect((await h.app.store.findJobByThread(channel, threadTs))?.agentJobId).toBe('job_1');
    await h.settled();
    expect(
      h.slack
        .threadPosts(threadTs)
        .map((m) => m.text)
        .join('\n'),
    ).not.toContain('No job was started');
  });

  it('answers Slack with an error for a reply it could not record, so Slack sends it again', async () => {
    h = await startHarness();
    const { threadTs, channel } = await h.startJob();
    await h.app.store.close();
    const res = await h.event({ channel, thread_ts: threadTs, text: 'lost?' });
    expect(res.status).toBe(500);
    // Slack's last re-delivery: no further one will come, so the person is told.
    const last = await h.event(
      { channel, thread_ts: threadTs, text: 'lost?' },
      {},
      { headers: { 'x-slack-retry-num': '3' } },
    );
    expect(last.status).toBe(200);
    const note = await waitFor('private note', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(note.args).toMatchObject({ channel, user: 'U0ALICE', thread_ts: threadTs });
    expect(String(note.args.text)).toContain('could not record that instruction');
  });

  it('explains a bare mention in a thread whose job never started, and starts nothing', async () => {
    h = await startHarness();
    h.agent.fail('create', { status: 400, body: JSON.stringify({ error: 'Prompt rejected' }) });
    const first = appMention({ text: '<@U0BOT> Document everything' });
    await h.anyEvent(first);
    await waitFor('refusal', () =>
      h.slack.threadPosts(first.ts).some((m) => m.text.includes('Prompt rejected')),
    );
    await h.anyEvent(appMention({ text: '<@U0BOT>', thread_ts: first.ts }));
    const hint = await waitFor('hint', () =>
      h.slack.callsTo('chat.postEphemeral').find((c) => String(c.args.text).includes('Tell me what to do')),
    );
    expect(hint.args.thread_ts).toBe(first.ts);
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
  });
});
