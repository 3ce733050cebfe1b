import { z } from 'zod';
import { errorCode, parseRetryAfter } from '../agent/attempt-failures.js';
import { checkPullRequestUrl } from '../slack/links.js';
import { truncateText } from '../slack/mrkdwn.js';
import type { PullRequestState } from '../store/types.js';
import { type HttpAnswer, httpRequest, textOf } from '../util/http-request.js';

/*
 * GitHub's REST API as the follower reads it: one operation, `GET /repos/{owner}/{repo}/pulls/{n}`,
 * asked conditionally (If-None-Match), its answer parsed with zod and treated as hostile text.
 * Nothing here retries: the follower's schedule does, with backoff, and a rate limit pauses it.
 */

/** Longest a request may take, in milliseconds (a redirect followed is one more). */
export const GITHUB_TIMEOUT_MS = 10_000;
/** Most bytes read of an answer: a pull request is tens of KB; more is cut off and not read. */
export const MAX_PULL_REQUEST_BYTES = 512 * 1024;
/** Wait after a rate limit that does not say how long (GitHub asks for at least a minute). */
export const DEFAULT_PAUSE_MS = 60_000;
/** Longest wait a rate limit may ask for; the primary limit resets every hour. */
export const MAX_PAUSE_MS = 3_600_000;
/** Longest title kept of what the host says. */
export const MAX_TITLE_CHARS = 300;

/** A GitHub login (or an app's, `name[bot]`): anything else is not shown at all. */
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/;

/** The fields the bot reads of a pull request; the rest of GitHub's answer is passed over. */
const pullRequestSchema = z.looseObject({
  state: z.enum(['open', 'closed']),
  merged: z.boolean().optional(),
  merged_at: z.string().max(64).nullable().optional(),
  merged_by: z
    .looseObject({ login: z.string().max(100) })
    .nullable()
    .optional(),
  html_url: z.string().max(4_000),
  title: z.string(),
});

/** A pull request as the host last said, checked and cut down. */
export interface HostPullRequest {
  state: PullRequestState;
  /** One line, at most {@link MAX_TITLE_CHARS}: still hostile, escaped where shown. */
  title: string;
  /** A login's syntax, else null. */
  mergedBy: string | null;
  /** The host's `merged_at` (epoch ms), when it parses. */
  mergedAt: number | null;
}

/** What one check came to. `pauseUntil`: the host said this token has no requests left until then. */
export type HostAnswer =
  | { kind: 'changed'; pullRequest: HostPullRequest; etag: string | null; pauseUntil?: number }
  | { kind: 'unchanged'; pauseUntil?: number }
  /** A primary or secondary rate limit: nothing more is asked until `until` (epoch ms). */
  | { kind: 'rate_limited'; until: number }
  /** 404 (or 410): the repository or the pull request is gone, or the token may not see it. */
  | { kind: 'missing' }
  /** 401, or a 403 that is no rate limit: the token is refused. */
  | { kind: 'refused'; status: number }
  /** A 5xx, a network error, a time-out, or an answer that does not parse: ask again later. */
  | { kind: 'unavailable'; why: string };

/** Where a pull request is on the host. */
export interface PullRequestPlace {
  owner: string;
  repo: string;
  number: number;
}

export interface PullRequestHost {
  /** The host's word on a pull request, asked with the ETag of its last full answer. */
  check(place: PullRequestPlace, etag: string | null): Promise<HostAnswer>;
}

/**
 * The web host whose pull request links this API answers for: `github.com` for GitHub's own API,
 * else the API's host (GitHub Enterprise Server serves both at `https://HOST/api/v3`).
 */
export function webHostOf(apiUrl: string): string {
  const host = new URL(apiUrl).hostname.toLowerCase();
  return host === 'api.github.com' ? 'github.com' : host;
}

const NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/**
 * Where a pull request link is, when the bot follows it: it passes the link rule (`PR_LINK_HOSTS`
 * and a pull request's path), is on `webHost`, and reads `/owner/repo/pull/n`. Undefined for a
 * link on another host (shown as not followed) or one the link rule refuses (not followed at all):
 * `passesLinkRule` tells the two apart.
 */
export function placeOf(
  link: string,
  webHost: string,
  prLinkHosts: readonly string[],
): { passesLinkRule: boolean; place?: PullRequestPlace } {
  const url = checkPullRequestUrl(link, prLinkHosts);
  if (!url) return { passesLinkRule: false };
  const parsed = new URL(url);
  if (parsed.hostname.toLowerCase() !== webHost) return { passesLinkRule: true };
  const match = /^\/([^/]+)\/([^/]+)\/pull\/(\d{1,9})\/?$/.exec(parsed.pathname);
  const [, owner = '', repo = '', number = ''] = match ?? [];
  if (!match || !NAME.test(owner) || !NAME.test(repo) || owner === '..' || repo === '..')
    return { passesLinkRule: true };
  return { passesLinkRule: true, place: { owner, repo, number: Number(number) } };
}

/** The pull request of an answer's body, or why it is not one. */
function pullRequestOf(text: string, truncated: boolean): HostPullRequest | string {
  if (truncated) return 'an answer over the size limit';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'an answer that is not JSON';
  }
  const parsed = pullRequestSchema.safeParse(json);
  if (!parsed.success) return 'an answer that is not a pull request';
  const pr = parsed.data;
  const merged = pr.merged === true || (pr.merged_at !== null && pr.merged_at !== undefined);
  const mergedAt = pr.merged_at ? Date.parse(pr.merged_at) : Number.NaN;
  const login = pr.merged_by?.login;
  return {
    state: pr.state === 'open' ? 'open' : merged ? 'merged' : 'closed',
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
    title: truncateText(pr.title.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim(), MAX_TITLE_CHARS),
    mergedBy: login && LOGIN.test(login) ? login : null,
    mergedAt: Number.isFinite(mergedAt) ? mergedAt : null,
  };
}

/** An answer's headers, as read here. */
type AnswerHeaders = Pick<Headers, 'get' | 'has'>;

/** When a rate limit ends, from `Retry-After` or `x-ratelimit-reset`; a minute when neither says. */
function pauseEnd(headers: AnswerHeaders, now: number): number {
  const wait = parseRetryAfter(headers, now);
  return now + Math.min(MAX_PAUSE_MS, Math.max(1_000, wait ?? DEFAULT_PAUSE_MS));
}

const exhausted = (headers: AnswerHeaders) => headers.get('x-ratelimit-remaining')?.trim() === '0';

/** What an answer's status and headers mean, its body read when it is a pull request. */
async function answerOf(answer: HttpAnswer, now: number): Promise<HostAnswer> {
  const { status } = answer;
  const headers: AnswerHeaders = { get: answer.header, has: (name) => answer.header(name) !== null };
  const pauseUntil = exhausted(headers) ? { pauseUntil: pauseEnd(headers, now) } : {};
  if (status === 304) return { kind: 'unchanged', ...pauseUntil };
  if (status === 200) {
    const { bytes, truncated } = await answer.body;
    const pullRequest = pullRequestOf(textOf(bytes), truncated);
    if (typeof pullRequest === 'string') return { kind: 'unavailable', why: pullRequest };
    const etag = headers.get('etag');
    return { kind: 'changed', pullRequest, etag: etag && etag.length <= 200 ? etag : null, ...pauseUntil };
  }
  // GitHub's secondary limits answer 403 or 429 with Retry-After; its primary one 403 (or 429)
  // with no requests remaining.
  if (status === 429 || (status === 403 && (exhausted(headers) || headers.has('retry-after'))))
    return { kind: 'rate_limited', until: pauseEnd(headers, now) };
  if (status === 401 || status === 403) return { kind: 'refused', status };
  if (status === 404 || status === 410) return { kind: 'missing' };
  return { kind: 'unavailable', why: `HTTP ${status}` };
}

export interface GitHubOptions {
  /** The REST API's base, without a trailing slash (`GITHUB_API_URL`). */
  apiUrl: string;
  /** `GITHUB_TOKEN`: sent only to `apiUrl`'s origin, never written anywhere. */
  token: string;
  /** Paces every request across instances (the host's limit is the token's, shared by all). */
  budget: { take(): Promise<void> };
  /** Called once per request with its status, or `timeout`/`network_error`. */
  onRequest?: (answer: number | 'timeout' | 'network_error') => void;
  timeoutMs?: number;
  now?: () => number;
}

/** GitHub's pull requests, read with the operator's token. */
export function createGitHub(options: GitHubOptions): PullRequestHost {
  const base = options.apiUrl.replace(/\/+$/, '');
  const origin = new URL(base).origin;
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? GITHUB_TIMEOUT_MS;

  async function request(url: string, etag: string | null): Promise<HttpAnswer> {
    await options.budget.take();
    try {
      const answer = await httpRequest(url, {
        method: 'GET',
        headers: {
          authorization: `Bearer ${options.token}`,
          accept: 'application/vnd.github+json',
          'x-github-api-version': '2022-11-28',
          'user-agent': 'docs-agent',
          ...(etag ? { 'if-none-match': etag } : {}),
        },
        signal: AbortSignal.timeout(timeoutMs),
        // Followed by hand, and only on the API's own origin: the token goes nowhere else.
        redirect: 'manual',
        // Only a pull request's answer is read: any other is dropped unread.
        maxBytes: (status) => (status === 200 ? MAX_PULL_REQUEST_BYTES : 0),
      });
      options.onRequest?.(answer.status);
      return answer;
    } catch (error) {
      const timedOut =
        error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      options.onRequest?.(timedOut ? 'timeout' : 'network_error');
      throw error;
    }
  }

  return {
    async check({ owner, repo, number }, etag) {
      const path = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/pulls/${number}`;
      try {
        let response = await request(`${base}${path}`, etag);
        // A renamed or moved repository answers with where it is now.
        const location = response.header('location');
        if ([301, 302, 307, 308].includes(response.status) && location) {
          const next = new URL(location, `${base}${path}`);
          if (next.origin !== origin) return { kind: 'unavailable', why: 'a redirect to another host' };
          response = await request(next.toString(), etag);
        }
        return await answerOf(response, now());
      } catch (error) {
        const timedOut =
          error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
        // The code alone: an error's message could quote the request.
        return {
          kind: 'unavailable',
          why: timedOut ? 'no answer in time' : `network error (${errorCode(error) ?? 'unknown'})`,
        };
      }
    },
  };
}
