import { type App, Assistant } from '@slack/bolt';
import { directMessage } from '../events/direct-message.js';
import type { ListenerDeps } from '../types.js';
import { screenAssistantEvents } from './malformed.js';
import {
  assistantContextStore,
  assistantThreadContextChanged,
  assistantThreadStarted,
} from './thread-events.js';

/**
 * Slack's assistant pane (Bolt's `Assistant`). Bolt routes every threaded direct message here,
 * the assistant pane's and any other, so `userMessage` is the direct-message listener itself.
 */
export function registerAssistant(app: App, deps: ListenerDeps): void {
  // Before the assistant: it throws on a thread it cannot read, which would answer Slack 500.
  app.use(screenAssistantEvents(deps));
  app.assistant(
    new Assistant({
      threadContextStore: assistantContextStore(deps),
      threadStarted: assistantThreadStarted(deps),
      threadContextChanged: assistantThreadContextChanged(deps),
      userMessage: directMessage(deps),
    }),
  );
}
