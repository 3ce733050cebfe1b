/**
 * A real Bolt app (the app's own receiver: Bolt's HTTPReceiver behind the front server) on a
 * free port, with only the listeners a test registers, given a listener world's dependencies
 * (see listener-deps.ts). Requests reach it signed as Slack signs them, so a test sees what a
 * registration really routes, and what the receiver answers.
 */
import type { App } from '@slack/bolt';
import { createSlackApp } from '../../src/http/bolt-app.js';
import type { ListenerDeps } from '../../src/listeners/types.js';
import type { ListenerWorld } from './listener-deps.js';
import { type CommandFields, eventEnvelope, interaction, slashCommand } from './payloads.js';
import { postSigned } from './signing.js';

export async function startListenerApp(
  world: ListenerWorld,
  register: (app: App, deps: ListenerDeps) => void,
) {
  const config = { ...world.config, port: 0 };
  const slackApp = createSlackApp({
    config,
    logger: world.ctx.logger,
    identity: world.identity,
    isReady: () => true,
  });
  register(slackApp.app, world.deps);
  const base = `http://127.0.0.1:${await slackApp.start()}`;
  const secret = config.slack.signingSecret as string;
  return {
    app: slackApp.app,
    /** An Events API event, signed; `envelope` overrides fields of its envelope. */
    event: (event: Record<string, unknown>, envelope: { event_id?: string } = {}) =>
      postSigned(base, eventEnvelope(event, envelope), { contentType: 'application/json', secret }),
    /** A JSON body of the test's own making (an envelope unlike the usual one), signed. */
    json: (body: Record<string, unknown>) =>
      postSigned(base, JSON.stringify(body), { contentType: 'application/json', secret }),
    /** An interactivity payload (shortcut, view submission, button click), signed. */
    interact: (payload: Record<string, unknown>) => postSigned(base, interaction(payload), { secret }),
    /** A slash command, signed. */
    command: (fields: CommandFields = {}) => postSigned(base, slashCommand(fields), { secret }),
    stop: () => slackApp.stop(),
  };
}

export type ListenerApp = Awaited<ReturnType<typeof startListenerApp>>;
