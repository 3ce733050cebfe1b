import { createHash } from 'node:crypto';
import { listen } from './http.js';

/** The token the stand-in accepts (shaped like a fine-grained GitHub token). */
export const GITHUB_TOKEN = 'github_pat_11TESTTOKEN0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH';

type Json = Record<string, unknown>;

/** A pull request as the stand-in serves it: GitHub's fields the bot reads, and a few it does not. */
export interface StandInPullRequest {
  owner: string;
  repo: string;
  number: number;
  state: 'open' | 'closed';
  merged: boolean;
  mergedAt: string | null;
  mergedBy: string | null;
  title: string;
  /** The head commit: a force-push changes it (and the ETag), nothing the bot shows. */
  headSha: string;
}

/** What a request answers instead of the pull request. */
export type GitHubFault =
  | { status: number; headers?: Record<string, string>; body?: string }
  /** Closes the connection without an answer. */
  | { hangUp: true };

/**
 * A loopback stand-in for GitHub's REST API, `GET /repos/{owner}/{repo}/pulls/{number}` only:
 * it checks the bearer token and the headers GitHub asks for, answers 304 to an If-None-Match of
 * the current ETag, and lets tests merge, close, reopen, force-push and delete pull requests,
 * and queue faults (rate limits, outages).
 */
export async function startGitHubStandIn(
  options: {
    token?: string;
    prefix?: string;
    /** How long every answer takes, in milliseconds (so overlapping checks of one pull request show). */
    latencyMs?: number;
    /** Called once an answer about a pull request has been sent (a fault test kills the app there). */
    after?: (answered: { pullRequest: StandInPullRequest; status: number }) => void;
  } = {},
) {
  const token = options.token ?? GITHUB_TOKEN;
  const prefix = options.prefix ?? '/api/v3';
  const pulls = new Map<string, StandInPullRequest>();
  const requests: { path: string; ifNoneMatch: string | null; status: number; at: number }[] = [];
  const faults: GitHubFault[] = [];
  const violations: string[] = [];
  /** Requests for a pull request that came while another for it was still unanswered. */
  const overlapping: string[] = [];
  const inFlight = new Map<string, number>();
  const key = (owner: string, repo: string, number: number) => `${owner}/${repo}#${number}`;

  const wire = (pr: StandInPullRequest): Json => ({
    url: `https://127.0.0.1/api/v3/repos/${pr.owner}/${pr.repo}/pulls/${pr.number}`,
    html_url: `https://127.0.0.1/${pr.owner}/${pr.repo}/pull/${pr.number}`,
    number: pr.number,
    state: pr.state,
    title: pr.title,
    merged: pr.merged,
    merged_at: pr.mergedAt,
    merged_by: pr.mergedBy ? { login: pr.mergedBy, id: 1, type: 'User' } : null,
    head: { sha: pr.headSha, ref: 'docs-agent/job' },
    user: { login: 'docs-agent-bot' },
    body: 'A body the bot never reads',
  });
  const etagOf = (body: string) => `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;

  const stand = await listen(async (req, _body, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const busy = inFlight.get(url.pathname) ?? 0;
    if (busy > 0) overlapping.push(url.pathname);
    inFlight.set(url.pathname, busy + 1);
    res.on('close', () => inFlight.set(url.pathname, (inFlight.get(url.pathname) ?? 1) - 1));
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
    const record = (status: number) =>
      requests.push({
        path: url.pathname,
        ifNoneMatch: (req.headers['if-none-match'] as string | undefined) ?? null,
        status,
        at: Date.now(),
      });
    const send = (status: number, body: string, headers: Record<string, string> = {}) => {
      record(status);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
    };
    const match = new RegExp(`^${prefix}/repos/([^/]+)/([^/]+)/pulls/(\\d+)$`).exec(url.pathname);
    if (req.method !== 'GET' || !match) {
      violations.push(`unexpected request ${req.method} ${url.pathname}`);
      return send(404, JSON.stringify({ message: 'Not Found' }));
    }
    if (req.headers.authorization !== `Bearer ${token}`)
      return send(401, JSON.stringify({ message: 'Bad credentials' }));
    if (!String(req.headers.accept).includes('application/vnd.github+json') || !req.headers['user-agent'])
      violations.push('a request without the Accept or User-Agent GitHub asks for');
    const fault = faults.shift();
    if (fault && 'hangUp' in fault) {
      record(0);
      res.socket?.destroy();
      return;
    }
    if (fault)
      return send(fault.status, fault.body ?? JSON.stringify({ message: 'Injected' }), fault.headers);
    const pr = pulls.get(key(match[1] as string, match[2] as string, Number(match[3])));
    if (!pr) return send(404, JSON.stringify({ message: 'Not Found' }));
    const body = JSON.stringify(wire(pr));
    const etag = etagOf(body);
    const answered = { pullRequest: { ...pr }, status: req.headers['if-none-match'] === etag ? 304 : 200 };
    if (options.after) res.on('finish', () => options.after?.(answered));
    if (answered.status === 304) return send(304, '', { etag });
    send(200, body, { etag, 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': '9999999999' });
  });

  const mustGet = (owner: string, repo: string, number: number) => {
    const pr = pulls.get(key(owner, repo, number));
    if (!pr) throw new Error(`no pull request ${key(owner, repo, number)}`);
    return pr;
  };

  return {
    /** The API's base, as `GITHUB_API_URL` names it (`/api/v3` as on GitHub Enterprise Server). */
    apiUrl: `${stand.url}${prefix}`,
    requests,
    violations,
    overlapping,
    /** A pull request's web address, on the host the API answers for (127.0.0.1). */
    link: (owner: string, repo: string, number: number) =>
      `https://127.0.0.1/${owner}/${repo}/pull/${number}`,
    open(owner: string, repo: string, number: number, title = 'Document the quickstart') {
      pulls.set(key(owner, repo, number), {
        owner,
        repo,
        number,
        state: 'open',
        merged: false,
        mergedAt: null,
        mergedBy: null,
        title,
        headSha: 'a'.repeat(40),
      });
    },
    merge(owner: string, repo: string, number: number, by: string | null, at = new Date()) {
      Object.assign(mustGet(owner, repo, number), {
        state: 'closed',
        merged: true,
        mergedAt: at.toISOString(),
        mergedBy: by,
      });
    },
    /** Closed without merging. */
    closeUnmerged(owner: string, repo: string, number: number) {
      Object.assign(mustGet(owner, repo, number), { state: 'closed' });
    },
    reopen(owner: string, repo: string, number: number) {
      Object.assign(mustGet(owner, repo, number), { state: 'open' });
    },
    /** A new head commit: the pull request is the same, its answer (and ETag) is not. */
    forcePush(owner: string, repo: string, number: number) {
      mustGet(owner, repo, number).headSha = 'b'.repeat(40);
    },
    retitle(owner: string, repo: string, number: number, title: string) {
      mustGet(owner, repo, number).title = title;
    },
    /** The repository (or the pull request) deleted: 404 from now on. */
    remove(owner: string, repo: string, number: number) {
      pulls.delete(key(owner, repo, number));
    },
    fail(...queued: GitHubFault[]) {
      faults.push(...queued);
    },
    pendingFaults: () => faults.length,
    /** Requests for one pull request, in order. */
    requestsFor: (owner: string, repo: string, number: number) =>
      requests.filter((r) => r.path === `${prefix}/repos/${owner}/${repo}/pulls/${number}`),
    close: stand.close,
  };
}

export type GitHubStandIn = Awaited<ReturnType<typeof startGitHubStandIn>>;
