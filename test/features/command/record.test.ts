import { describe, expect, it } from 'vitest';
import type { StartRequest } from '../../../src/features/command/record.js';
import { TEAM } from '../../helpers/fake-network.js';
import {
  jobRecording,
  recordingOf,
  recordingWorld,
  sampleCommand,
  startRequest,
} from '../../helpers/job-requests.js';
import { CHANNEL, createJobWorld, INSTANCE, REQUESTER, T0 } from '../../helpers/job-world.js';

const t = recordingWorld();

const command = (fields: Partial<StartRequest> = {}) => t.record.command(sampleCommand(fields));

describe('recordCommand', () => {
  it('records an accepted job and its first run, owned by this instance, and queues nothing', async () => {
    const id = await command();
    const job = await t.w.job(id ?? -1);
    expect(job).toMatchObject({
      phase: 'accepted',
      origin: 'command',
      teamId: TEAM,
      channelId: CHANNEL,
      requesterId: REQUESTER,
      instruction: 'Document the <https://example.com/limits|rate limits> &amp; quotas',
      triggerKey: 'command:trigger-1',
      responseUrl: 'https://hooks.slack.com/commands/T0TEST/1/test',
      projectId: t.w.config.agent.projectId,
      owner: INSTANCE,
      threadTs: null,
      createdAt: T0,
    });
    const runs = await t.w.runs(job.id);
    expect(runs).toHaveLength(1);
    // The agent gets plain text: links and entities decoded.
    expect(runs[0]).toMatchObject({ kind: 'create', state: 'pending', authorId: REQUESTER, messageTs: null });
    expect(runs[0]?.prompt).toBe('Document the rate limits (https://example.com/limits) & quotas');
    expect(t.w.outbox()).toEqual([]);
  });

  it('records the same trigger once: a repeat returns undefined', async () => {
    expect(await command()).toBeTypeOf('number');
    expect(await command({ text: 'something else' })).toBeUndefined();
    expect(t.w.jobCount()).toBe(1);
  });

  it('runs the job on the channel’s project', async () => {
    await t.w.store.close();
    t.w = createJobWorld({ CHANNEL_PROJECTS: `${CHANNEL}:proj_other` });
    t.record = recordingOf(
      jobRecording(t.w, async () => undefined),
      t.w,
    );
    const job = await t.w.job((await command()) ?? -1);
    expect(job.projectId).toBe('proj_other');
  });
});

describe('StartRequest', () => {
  it('triggerId: a repeat of the same invocation never records a second job', async () => {
    const id = await t.record.command(startRequest());
    expect(id).toBeTypeOf('number');
    expect(await t.record.command(startRequest())).toBeUndefined();
    expect(await t.record.command(startRequest({ triggerId: 'trigger-2' }))).toBeTypeOf('number');
    expect(t.w.jobCount()).toBe(2);
  });

  it('audience: what the command said is recorded; nothing said leaves it to Slack (unknown until asked)', async () => {
    const said = (await t.record.command(startRequest({ audience: 'private' }))) as number;
    const unsaid = (await t.record.command(startRequest({ triggerId: 'trigger-2' }))) as number;
    expect((await t.w.job(said)).privacy).toBe('private');
    expect((await t.w.job(unsaid)).privacy).toBe('unknown');
  });

  it('responseUrl: kept with the job, to answer the person privately', async () => {
    const id = (await t.record.command(startRequest())) as number;
    expect((await t.w.job(id)).responseUrl).toBe('https://hooks.slack.test/commands/1');
  });
});
