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
