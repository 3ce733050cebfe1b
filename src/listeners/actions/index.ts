import type { App } from '@slack/bolt';
import type { ListenerDeps } from '../types.js';

export function registerActions(app: App, _deps: ListenerDeps): void {
  // "View pull request" opens its URL in the browser; Slack still sends the click, and an
  // unacknowledged click shows the person a warning.
  app.action('view_pull_request', async ({ ack }) => {
    await ack();
  });
}
