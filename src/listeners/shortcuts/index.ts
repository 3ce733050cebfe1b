import type { App } from '@slack/bolt';
import { SHORTCUT_CALLBACK_ID } from '../../blocks/send-modal.js';
import type { ListenerDeps } from '../types.js';
import { sendToDocsAgent } from './send-to-docs-agent.js';

export function registerShortcuts(app: App, deps: ListenerDeps): void {
  app.shortcut(SHORTCUT_CALLBACK_ID, sendToDocsAgent(deps));
}
