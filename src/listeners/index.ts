import type { App } from '@slack/bolt';
import { registerActions } from './actions/index.js';
import { registerAssistant } from './assistant/index.js';
import { registerCommands } from './commands/index.js';
import { registerEvents } from './events/index.js';
import { registerFunctions } from './functions/index.js';
import { learnInstallation } from './installation.js';
import { registerShortcuts } from './shortcuts/index.js';
import type { ListenerDeps } from './types.js';
import { registerViews } from './views/index.js';

/** Registers every Slack surface the app answers. */
export function registerListeners(app: App, deps: ListenerDeps): void {
  app.use(learnInstallation(deps.identity));
  registerAssistant(app, deps);
  registerCommands(app, deps);
  registerEvents(app, deps);
  registerShortcuts(app, deps);
  registerViews(app, deps);
  registerActions(app, deps);
  registerFunctions(app, deps);
}
