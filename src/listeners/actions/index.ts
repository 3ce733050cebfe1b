import type { App } from '@slack/bolt';
import { RETRY_ACTION_ID } from '../../blocks/status-card.js';
import type { ListenerDeps } from '../types.js';
import { tryAgain } from './try-again.js';

export function registerActions(app: App, deps: ListenerDeps): void {
  // "View pull request" opens its URL in the browser; Slack still sends the click, and an
  // unacknowledged click shows the person a warning.
  app.action('view_pull_request', async ({ ack }) => {
    await ack();
  });
  app.action(RETRY_ACTION_ID, tryAgain(deps));
}
