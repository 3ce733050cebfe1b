import { isPublicJob } from '../domain/privacy.js';
import { checkPullRequestUrl, type SafeUrl } from '../slack/links.js';
import { escapeMrkdwn, type Mrkdwn, md } from '../slack/mrkdwn.js';
import type { JobRecord } from '../store/types.js';
import type { RenderHints } from './messages.js';

/**
 * The outputs of a "Wait for a docs agent job" step, named and typed as the manifest's
 * `output_parameters`. A workflow hands them to its next steps ("Send a message" shows them as
 * they are), so they keep the promises of a post: text is mrkdwn escaped as in a message, and an
 * address is one the thread would show as a link.
 */
export type WaitOutputs = {
  job_id: number;
  /** The run's outcome (`completed_pr`…), for a workflow's branches. */
  status: Mrkdwn;
  /** What happened, in a sentence: says when the pull request's link was withheld. */
  summary: Mrkdwn;
  thread_link?: SafeUrl;
  pull_request_link?: SafeUrl;
};

/** What becomes of the job's pull request address in the outputs. */
type PullRequest = { link: SafeUrl } | 'none' | 'private' | 'withheld';

function pullRequestOf(job: JobRecord, hints: Pick<RenderHints, 'prLinkHosts'>): PullRequest {
  if (!job.prLink) return 'none';
  // What a workflow passes on may reach people who cannot read the job's channel.
  if (!isPublicJob(job)) return 'private';
  // The thread's own rule: https, on PR_LINK_HOSTS, a pull request's path, no Slack syntax.
  const link = checkPullRequestUrl(job.prLink, hints.prLinkHosts);
  return link ? { link } : 'withheld';
}

function outcomeSentence(status: string): Mrkdwn {
  switch (status) {
    case 'completed_pr':
      return md`The docs agent finished and opened a pull request.`;
    case 'completed_no_changes':
      return md`The docs agent finished without changing any files, so no pull request was opened.`;
    case 'failed':
      return md`The docs agent job failed; the agent API does not say why.`;
    case 'archived':
      return md`The docs agent job was archived, so it will not continue.`;
    case 'gone':
      return md`The agent API no longer knows the docs agent job.`;
    case 'stopped_watching':
      return md`The docs agent stopped watching the job: it was still running after its time limit.`;
    default:
      return md`The docs agent job's run ended.`;
  }
}

const PULL_REQUEST_NOTES: Record<'private' | 'withheld', Mrkdwn> = {
  private: md` Its pull request link is not passed on, because the job's channel is not public: the job's thread has it.`,
  withheld: md` Its pull request link was withheld: the address is not a pull request on a host this docs agent trusts (PR_LINK_HOSTS). The job's thread shows it as text.`,
};

/** The outputs of a wait whose job's run has ended; `threadLink` already checked. */
export function waitOutputs(
  job: JobRecord,
  threadLink: SafeUrl | undefined,
  hints: Pick<RenderHints, 'prLinkHosts'>,
): WaitOutputs {
  const status = job.lastOutcome ?? job.phase;
  const pullRequest = pullRequestOf(job, hints);
  const note =
    typeof pullRequest === 'string' && pullRequest !== 'none' ? PULL_REQUEST_NOTES[pullRequest] : md``;
  return {
    job_id: job.id,
    status: escapeMrkdwn(status),
    summary: md`${outcomeSentence(status)}${note}`,
    ...(threadLink ? { thread_link: threadLink } : {}),
    ...(typeof pullRequest === 'object' ? { pull_request_link: pullRequest.link } : {}),
  };
}
