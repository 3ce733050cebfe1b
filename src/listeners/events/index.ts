import type { App } from '@slack/bolt';
import type { ListenerDeps } from '../types.js';
import { appHomeOpened } from './app-home-opened.js';
import { appMention } from './app-mention.js';
import { directMessage } from './direct-message.js';
import { threadReply } from './thread-reply.js';

export function registerEvents(app: App, deps: ListenerDeps): void {
  app.event('message', threadReply(deps));
  // Messages at the top of a direct message; threaded ones reach the assistant's listener.
  app.event('message', directMessage(deps));
  app.event('app_mention', appMention(deps));
  app.event('app_home_opened', appHomeOpened(deps));
}
