import type { App } from '@slack/bolt';
import type { ListenerDeps } from '../types.js';
import { docsAgentCommand } from './docs-agent-command.js';

export function registerCommands(app: App, deps: ListenerDeps): void {
  // The app owns one command; matching any name keeps it working if a workspace renames it.
  app.command(/^\/.+/, docsAgentCommand(deps));
}
