import { describe, expect, it } from 'vitest';
import { waitOutputs } from '../../src/blocks/wait-outputs.js';
import { checkUrl } from '../../src/slack/links.js';
import type { JobRecord, RunOutcome } from '../../src/store/types.js';
import { jobRecord } from '../helpers/job-record.js';

const HOSTS = { prLinkHosts: ['github.com'] };
const THREAD = checkUrl('https://acme.slack.com/archives/C0DOCS/p1700000000000100');

const ended = (fields: Partial<JobRecord>) =>
  jobRecord({ id: 3, origin: 'workflow', phase: 'idle', privacy: 'public', ...fields });

describe('waitOutputs', () => {
  it('passes on a public job’s pull request the thread would link, with its thread', () => {
    const prLink = 'https://github.com/acme/docs/pull/7';
    expect(waitOutputs(ended({ lastOutcome: 'completed_pr', prLink }), THREAD, HOSTS)).toEqual({
      job_id: 3,
      status: 'completed_pr',
      summary: 'The docs agent finished and opened a pull request.',
      thread_link: THREAD,
      pull_request_link: prLink,
    });
  });

  it.each([
    'https://evil.example/o/r/pull/1',
    'https://github.com/acme/docs/pull/7 <!channel> <@U0123ABCD>',
    'https://github.com/acme/docs/pull/7>|<!here>',
    'https://github.com.evil.example/acme/docs/pull/7',
    'https://github.com/acme/docs/settings',
    'javascript:alert(1)//github.com/acme/docs/pull/7',
  ])('withholds %s and says so in the summary', (prLink) => {
    const outputs = waitOutputs(ended({ lastOutcome: 'completed_pr', prLink }), THREAD, HOSTS);
    expect(outputs).not.toHaveProperty('pull_request_link');
    expect(outputs.summary).toBe(
      "The docs agent finished and opened a pull request. Its pull request link was withheld: the address is not a pull request on a host this docs agent trusts (PR_LINK_HOSTS). The job's thread shows it as text.",
    );
    expect(Object.values(outputs).join(' ')).not.toMatch(/[<>|]/);
  });

  it('passes no pull request on from a job that is not public, and says where it is', () => {
    for (const privacy of ['private', 'direct', 'pane', 'unknown'] as const) {
      const job = ended({
        lastOutcome: 'completed_pr',
        prLink: 'https://github.com/acme/docs/pull/7',
        privacy,
      });
      const outputs = waitOutputs(job, THREAD, HOSTS);
      expect(outputs).not.toHaveProperty('pull_request_link');
      expect(outputs.summary).toContain(
        "pull request link is not passed on, because the job's channel is not public",
      );
    }
  });

  it.each<[RunOutcome, string]>([
    [
      'completed_no_changes',
      'The docs agent finished without changing any files, so no pull request was opened.',
    ],
    ['failed', 'The docs agent job failed; the agent API does not say why.'],
    ['archived', 'The docs agent job was archived, so it will not continue.'],
    ['gone', 'The agent API no longer knows the docs agent job.'],
    [
      'stopped_watching',
      'The docs agent stopped watching the job: it was still running after its time limit.',
    ],
  ])('sums up %s in a sentence without emoji codes', (outcome, summary) => {
    expect(waitOutputs(ended({ lastOutcome: outcome }), undefined, HOSTS)).toEqual({
      job_id: 3,
      status: outcome,
      summary,
    });
  });

  it('gives the job’s phase as its status when it has no outcome', () => {
    expect(waitOutputs(ended({ lastOutcome: null }), undefined, HOSTS)).toMatchObject({
      status: 'idle',
      summary: "The docs agent job's run ended.",
    });
  });
});
