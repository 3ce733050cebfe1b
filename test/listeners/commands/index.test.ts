import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCommands } from '../../../src/listeners/commands/index.js';
import { type ListenerApp, startListenerApp } from '../../helpers/listener-app.js';
import { createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

// One app for the file: each test sends its own command, and reads back only what that one did.
let w: ListenerWorld;
let app: ListenerApp;
beforeAll(async () => {
  w = createListenerWorld();
  app = await startListenerApp(w, registerCommands);
});
afterAll(async () => {
  await app.stop();
  await w.stop();
});

describe('registerCommands', () => {
  it('answers /docs-agent through the receiver, in the acknowledgement', async () => {
    const res = await app.command({ text: 'help' });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { response_type: string; text: string };
    expect(answer.response_type).toBe('ephemeral');
    expect(answer.text).toContain('/docs-agent list');
  });

  it('answers the command under any name a workspace gave it', async () => {
    for (const command of ['/docs-agent-staging', '/docs']) {
      const res = await app.command({ command, text: 'help' });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { text: string }).text).toContain('/docs-agent list');
    }
  });

  it('records an instruction before the receiver answers Slack', async () => {
    const res = await app.command({ text: 'Document the rate limits', user_id: 'W0GRIDUSER' });
    expect(res.status).toBe(200);
    expect(await w.store.recentJobs({ requesterId: 'W0GRIDUSER' }, 5)).toEqual([
      expect.objectContaining({ origin: 'command', instruction: 'Document the rate limits' }),
    ]);
    await w.idle();
  });

  it('a command it cannot read is still answered, with a clear message', async () => {
    const res = await app.command({ text: 'Document the rate limits', user_id: 'U0UNREAD', trigger_id: '' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { text: string }).text).toContain('could not read that command');
    expect(await w.store.recentJobs({ requesterId: 'U0UNREAD' }, 5)).toEqual([]);
  });
});
