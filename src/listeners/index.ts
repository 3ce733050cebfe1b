import type { App } from '@slack/bolt';
import { registerCommands } from './commands/index.js';
import { registerEvents } from './events/index.js';
import type { ListenerDeps } from './types.js';

/** Registers every Slack surface the app answers. */
export function registerListeners(app: App, deps: ListenerDeps): void {
  registerCommands(app, deps);
  registerEvents(app, deps);
}
