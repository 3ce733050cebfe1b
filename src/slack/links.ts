/**
 * Addresses the bot makes clickable. A link or button shows one thing and leads to another if
 * its address is not what it seems, so only addresses checked here ({@link SafeUrl}) become
 * links; any other address is shown as inert text.
 */
declare const safeUrlBrand: unique symbol;
export type SafeUrl = string & { readonly [safeUrlBrand]: true };

/** Slack keeps at most this many characters of a button's `url`. */
export const MAX_URL_CHARS = 3_000;

/**
 * The address as a {@link SafeUrl} if it is `https`, at most {@link MAX_URL_CHARS} long, has no
 * white space, control character, `<`, `>` or `|` (which would end Slack's link syntax), no user
 * name or password, and, when `hosts` is given, a host in that list (exactly, or a subdomain
 * is not enough). Undefined otherwise.
 */
export function checkUrl(raw: string | null | undefined, hosts?: readonly string[]): SafeUrl | undefined {
  if (!raw || raw.length > MAX_URL_CHARS) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\s<>|\u0000-\u001f\u007f]/.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.username || url.password) return undefined;
  if (hosts && !hosts.includes(url.hostname.toLowerCase())) return undefined;
  return raw as SafeUrl;
}

/**
 * The path of a pull request (GitHub `/owner/repo/pull/7`), merge request (GitLab
 * `/group/project/-/merge_requests/7`) or Bitbucket pull request (`/team/repo/pull-requests/7`):
 * a trusted host serves much else (sign-in pages, other people's repositories' settings), and
 * only a pull request is what the button promises.
 */
const PULL_REQUEST_PATH = /^\/[^/]+(\/[^/]+)+\/(pull|-\/merge_requests|pull-requests)\/\d+\/?$/;

/** A pull request address the bot shows as a link: {@link checkUrl} on `hosts`, with a pull request's path. */
export function checkPullRequestUrl(
  raw: string | null | undefined,
  hosts: readonly string[],
): SafeUrl | undefined {
  const url = checkUrl(raw, hosts);
  if (!url) return undefined;
  const { pathname } = new URL(url);
  return PULL_REQUEST_PATH.test(pathname) ? url : undefined;
}

/**
 * A message's permalink, built from the workspace address (auth.test's `url`) without a
 * chat.getPermalink call per message: lists show many, and the acknowledgement cannot wait.
 */
export function permalink(
  workspaceUrl: string | undefined,
  channel: string,
  ts: string,
  threadTs?: string,
): string | undefined {
  if (!workspaceUrl) return undefined;
  const base = workspaceUrl.endsWith('/') ? workspaceUrl : `${workspaceUrl}/`;
  const link = `${base}archives/${channel}/p${ts.replace('.', '')}`;
  return threadTs && threadTs !== ts ? `${link}?thread_ts=${threadTs}&cid=${channel}` : link;
}
