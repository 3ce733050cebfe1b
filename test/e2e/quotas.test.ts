import { describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/access/access-policy.js';
import { AGENT_HOURLY_LIMIT } from '../../src/agent/schema.js';
import { PROJECT_ID } from '../helpers/agent-stand-in.js';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';

describe('per-person hourly limit under a burst', () => {
  const h = useHarness({ MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '3' });

  it('starts exactly the limit of 15 simultaneous commands from one person and tells the rest privately', async () => {
    const ids = Array.from({ length: 15 }, (_v, i) => `burst${i}`);
    const answers = await Promise.all(
      ids.map((id, i) =>
        h.command({
          channel_id: 'C0DOCS',
          text: `Burst instruction ${i}`,
          response_url: h.slack.responseUrl(id),
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(ids.map(() => 200));

    const refusals = await waitFor('twelve private refusals', () => {
      const found = h.slack.responses.filter((r) => ids.some((id) => r.path === `/respond/${id}`));
      return found.length >= 12 ? found : undefined;
    });
    await waitFor('three jobs started', () => h.agent.requestsFor('create').length >= 3);
    // Let any straggler that wrongly got through reach the agent stand-in.
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(3);
    expect(h.slack.responses.filter((r) => r.path.startsWith('/respond/burst'))).toHaveLength(12);
    for (const refusal of refusals) {
      expect(refusal.body.response_type).toBe('ephemeral');
      expect(String(refusal.body.text)).toContain('3 instructions in the last hour');
    }
    // Nothing about the refused ones was posted in the channel.
    const roots = h.slack.messages.filter((m) => !m.thread_ts && m.text.includes('Burst instruction'));
    expect(roots).toHaveLength(3);
  });

  it('counts a person’s simultaneous replies in a thread the same way', async () => {
    const { channel, threadTs } = await h.startJob({ channel_id: 'C0DOCS' });
    const replies = Array.from({ length: 6 }, (_v, i) => `Reply number ${i}`);
    await Promise.all(replies.map((text) => h.event({ channel, thread_ts: threadTs, text })));
    const refusals = await waitFor('four private refusals', () => {
      const found = h.slack.callsTo('chat.postEphemeral');
      return found.length >= 4 ? found : undefined;
    });
    const sentText = () =>
      h.agent
        .requestsFor('message')
        .map((r) => JSON.stringify(r.body))
        .join(' ');
    await waitFor('two replies sent', () => replies.filter((r) => sentText().includes(r)).length >= 2);
    await h.settled();
    expect(replies.filter((r) => sentText().includes(r))).toHaveLength(2);
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(4);
    for (const refusal of refusals)
      expect(String(refusal.args.text)).toContain('3 instructions in the last hour');
  });
});

describe('the project’s hourly limit', () => {
  const h = useHarness(
    { MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '1000' },
    {
      // Others used the project's whole hourly quota a few minutes ago.
      seed: async (store) => {
        const at = Date.now() - 5 * 60_000;
        for (let i = 0; i < AGENT_HOURLY_LIMIT; i++) {
          const { run } = await store.insertJob(
            {
              teamId: 'T0TEAM',
              channelId: 'C0OTHER',
              requesterId: `U0USER${i % 7}`,
              instruction: `Earlier ${i}`,
              triggerKey: `earlier:${i}`,
              responseUrl: null,
              pollIntervalMs: 1_000,
              projectId: PROJECT_ID,
            },
            { kind: 'create', prompt: `Earlier ${i}`, authorId: `U0USER${i % 7}`, messageTs: null },
            at,
          );
          const reserved = await store.reserveUse(
            run.id,
            { perUser: 1_000, perProject: AGENT_HOURLY_LIMIT, defaultProject: PROJECT_ID, windowMs: HOUR_MS },
            at,
          );
          expect(reserved.reserved).toBe(true);
          await store.apply(
            {
              jobId: run.jobId,
              job: { phase: 'idle', agentJobId: `earlier_${i}`, lastOutcome: 'completed_no_changes' },
              run: { id: run.id, patch: { state: 'sent', sentAt: at } },
            },
            at,
          );
        }
      },
    },
  );

  it('refuses privately once the project used its 100 instructions this hour, and says when to try again', async () => {
    const res = await h.command({ channel_id: 'C0DOCS', response_url: h.slack.responseUrl('full') });
    expect(res.status).toBe(200);
    const reply = await waitFor('private answer', () =>
      h.slack.responses.find((r) => r.path === '/respond/full'),
    );
    expect(reply.body.response_type).toBe('ephemeral');
    expect(String(reply.body.text)).toContain('hourly limit');
    expect(String(reply.body.text)).toMatch(/<!date\^\d+\^/);
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);

    const status = await h.command({ text: 'status' });
    const body = (await status.json()) as { text: string };
    expect(body.text).toContain(`100 of ${AGENT_HOURLY_LIMIT} instructions used`);
  });
});
