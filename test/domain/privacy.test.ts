import { describe, expect, it } from 'vitest';
import { isPublicJob, JOB_PRIVACIES, type JobPrivacy, mayShowJob } from '../../src/domain/privacy.js';

const job = (privacy: JobPrivacy) => ({ privacy, channelId: 'C0DOCS', requesterId: 'U0ALICE' });

describe('job privacy', () => {
  it('lists every privacy the store may hold', () => {
    expect([...JOB_PRIVACIES].sort()).toEqual(['direct', 'pane', 'private', 'public', 'unknown']);
  });

  it('calls only a public channel job public; unknown is closed like private', () => {
    expect(JOB_PRIVACIES.filter((privacy) => isPublicJob({ privacy }))).toEqual(['public']);
  });

  it('shows a public job to anyone, anywhere, and to no one said at all', () => {
    expect(mayShowJob(job('public'), { userId: 'U0BOB' })).toBe(true);
    expect(mayShowJob(job('public'), { channelId: 'C0ELSEWHERE' })).toBe(true);
    expect(mayShowJob(job('public'), {})).toBe(true);
  });

  it('shows any other job to its requester wherever they read it', () => {
    for (const privacy of JOB_PRIVACIES)
      expect(mayShowJob(job(privacy), { userId: 'U0ALICE', channelId: 'C0ELSEWHERE' })).toBe(true);
  });

  it('shows any other job to the people of its own conversation', () => {
    for (const privacy of JOB_PRIVACIES)
      expect(mayShowJob(job(privacy), { userId: 'U0BOB', channelId: 'C0DOCS' })).toBe(true);
  });

  it('hides a non-public job from someone else, in another conversation or none', () => {
    for (const privacy of JOB_PRIVACIES.filter((p) => p !== 'public')) {
      expect(mayShowJob(job(privacy), { userId: 'U0BOB' })).toBe(false);
      expect(mayShowJob(job(privacy), { userId: 'U0BOB', channelId: 'C0ELSEWHERE' })).toBe(false);
      // A notification channel is an audience with no one person.
      expect(mayShowJob(job(privacy), { channelId: 'C0NOTIFY' })).toBe(false);
      expect(mayShowJob(job(privacy), {})).toBe(false);
    }
  });

  it('never matches an audience left unsaid against a job’s ids', () => {
    const blank = { privacy: 'private' as const, channelId: '', requesterId: '' };
    expect(mayShowJob(blank, { userId: undefined, channelId: undefined })).toBe(false);
  });
});
