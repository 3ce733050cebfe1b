import type { App } from '@slack/bolt';

export function registerActions(app: App): void {
  // "View pull request" opens its URL in the browser; Slack still sends the click, and an
  // unacknowledged click shows the person a warning.
  app.action('view_pull_request', async ({ ack }) => {
    await ack();
  });
}
