import type { App } from '@slack/bolt';
import type { ListenerDeps } from '../types.js';
import { appContextChanged } from './app-context-changed.js';
import { appHomeOpened } from './app-home-opened.js';
import { appMention } from './app-mention.js';
import { directMessage } from './direct-message.js';
import { messageDeleted } from './message-deleted.js';
import { messageEdited } from './message-edited.js';
import { threadReply } from './thread-reply.js';

export function registerEvents(app: App, deps: ListenerDeps): void {
  app.event('message', threadReply(deps));
  // Messages at the top of a direct message; threaded ones reach the assistant's listener.
  app.event('message', directMessage(deps));
  app.event('message', messageEdited(deps));
  app.event('message', messageDeleted(deps));
  app.event('app_mention', appMention(deps));
  app.event('app_home_opened', appHomeOpened(deps));
  // Agent messaging's Messages tab; the assistant pane's own events go to listeners/assistant.
  app.event('app_context_changed', appContextChanged(deps));
}
