import type { App } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { registerActions } from '../../../src/listeners/actions/index.js';
import { createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

/** The handlers `registerActions` gives Bolt, by action id. */
function registered() {
  const handlers = new Map<string, (args: { ack: () => Promise<void> }) => Promise<void>>();
  const app = { action: vi.fn((id: string, handler: never) => handlers.set(id, handler)) };
  registerActions(app as unknown as App, w.deps);
  return handlers;
}

describe('actions', () => {
  it('acknowledges a click on “View pull request”, so Slack shows the person no warning', async () => {
    const handler = registered().get('view_pull_request');
    expect(handler).toBeDefined();
    const ack = vi.fn(async () => {});
    await handler?.({ ack });
    expect(ack).toHaveBeenCalledOnce();
    expect(ack).toHaveBeenCalledWith();
  });

  it('answers “View pull request”, and no other action (feedback and “Try again” are their features’)', () => {
    expect([...registered().keys()]).toEqual(['view_pull_request']);
  });
});
