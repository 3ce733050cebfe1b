import type { App } from '@slack/bolt';
import { describe, expect, it, vi } from 'vitest';
import { registerActions } from '../../../src/listeners/actions/index.js';

/** The handlers `registerActions` gives Bolt, by action id. */
function registered() {
  const handlers = new Map<string, (args: { ack: () => Promise<void> }) => Promise<void>>();
  const app = { action: vi.fn((id: string, handler: never) => handlers.set(id, handler)) };
  registerActions(app as unknown as App);
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

  it('answers no other action', () => {
    expect([...registered().keys()]).toEqual(['view_pull_request']);
  });
});
