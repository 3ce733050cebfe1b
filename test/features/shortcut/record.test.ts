import { describe, expect, it } from 'vitest';
import type { ShortcutRequest } from '../../../src/features/shortcut/record.js';
import {
  jobRecording,
  recordingOf,
  recordingWorld,
  sampleShortcut,
  shortcutRequest,
} from '../../helpers/job-requests.js';
import { CHANNEL, createJobWorld } from '../../helpers/job-world.js';

const t = recordingWorld();

const shortcut = (fields: Partial<ShortcutRequest> = {}) => t.record.shortcut(sampleShortcut(fields));

describe('recordShortcut', () => {
  it('in the message’s channel: the job lives in the message’s thread, the message as context', async () => {
    const accepted = await shortcut();
    expect(accepted).toEqual({ job: expect.any(Number) });
    const job = await t.w.job((accepted as { job: number }).job);
    expect(job).toMatchObject({
      origin: 'shortcut',
      threadTs: '1700000200.000200',
      triggerKey: 'shortcut:V0TEST1',
      instruction: 'Turn this into a guide',
    });
    const prompt = (await t.w.runs(job.id))[0]?.prompt ?? '';
    expect(prompt).toContain('Turn this into a guide');
    expect(prompt).toContain('How do I rotate keys?');
    expect(prompt).toContain('Ada');
    expect(prompt).toContain('https://example-test.slack.com/archives/C0TEST/p1700000200000200');
  });

  it('in another channel: the job gets a thread of its own', async () => {
    const accepted = await shortcut({ channelId: 'C0ELSEWHERE' });
    const job = await t.w.job((accepted as { job: number }).job);
    expect(job).toMatchObject({ channelId: 'C0ELSEWHERE', threadTs: null });
  });

  it('the same submission again is a repeat; another job in the thread takes it', async () => {
    await shortcut();
    expect(await shortcut()).toBe('repeat');
    expect(await shortcut({ viewId: 'V0TEST2' })).toBe('thread_taken');
    expect(t.w.jobCount()).toBe(1);
  });
});

describe('what a shortcut records exactly', () => {
  it('a shortcut trims its instruction, and leaves out a message with no text', async () => {
    const accepted = await shortcut({
      instruction: '  Turn this into a guide  ',
      message: {
        channelId: CHANNEL,
        ts: '1700000200.000200',
        threadTs: undefined,
        text: '   ',
        author: 'Ada',
      },
      permalink: undefined,
    });
    const job = await t.w.job((accepted as { job: number }).job);
    expect(job.instruction).toBe('Turn this into a guide');
    expect((await t.w.runs(job.id))[0]?.prompt).toBe('Turn this into a guide');
  });

  it('a shortcut gives the agent the message as plain text, trimmed, whole up to 3,000 characters', async () => {
    await t.w.store.close();
    t.w = createJobWorld({ THREAD_CONTEXT_MAX_CHARS: '100' });
    t.record = recordingOf(
      jobRecording(t.w, async () => undefined),
      t.w,
    );
    const long = `${'word '.repeat(500)}end`;
    const accepted = await shortcut({
      message: {
        channelId: CHANNEL,
        ts: '1700000200.000200',
        threadTs: undefined,
        text: `  <https://x.io|the guide> ${long}  `,
        author: 'Ada',
      },
    });
    const prompt = (await t.w.runs((accepted as { job: number }).job))[0]?.prompt ?? '';
    expect(prompt.startsWith('Turn this into a guide')).toBe(true);
    expect(prompt).toContain(`Ada: the guide (https://x.io) ${long}\n`);
  });
});

describe('ShortcutRequest', () => {
  it('viewId: the same submission again is a repeat', async () => {
    expect(await t.record.shortcut(shortcutRequest())).toEqual({ job: expect.any(Number) });
    expect(await t.record.shortcut(shortcutRequest())).toBe('repeat');
    expect(t.w.jobCount()).toBe(1);
  });
});
