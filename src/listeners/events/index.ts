import type { App } from '@slack/bolt';
import type { ListenerDeps } from '../types.js';
import { threadReply } from './thread-reply.js';

export function registerEvents(app: App, deps: ListenerDeps): void {
  app.event('message', threadReply(deps));
}
