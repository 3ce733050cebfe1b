import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { messageEvent, slashCommand } from '../helpers/payloads.js';
import { postSigned } from '../helpers/signing.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

describe('malformed requests to /slack/events', () => {
  it('refuses a timestamp from the far future', async () => {
    const res = await postSigned(h.base(), slashCommand(), {
      timestamp: Math.floor(Date.now() / 1000) + 10 * 60,
    });
    expect(res.status).toBe(401);
  });

  it('refuses a body over the size limit without reading it all', async () => {
    const res = await postSigned(h.base(), slashCommand({ text: 'x'.repeat(2 * 1024 * 1024) }));
    expect(res.status).toBe(413);
  });

  it('answers a signed but truncated JSON event with 400', async () => {
    const body = messageEvent({ text: 'hi' });
    const res = await postSigned(h.base(), body.slice(0, body.length - 10), {
      contentType: 'application/json',
    });
    expect(res.status).toBe(400);
  });

  it('answers a signed body of a wrong content type with 415', async () => {
    const res = await postSigned(h.base(), 'just some text', { contentType: 'text/plain' });
    expect(res.status).toBe(415);
  });

  it('answers a signed slash command with missing fields with a private message', async () => {
    const [creates, posts] = [h.agent.requestsFor('create').length, h.slack.messages.length];
    const res = await postSigned(h.base(), 'command=%2Fdocs-agent&text=hello');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      response_type: 'ephemeral',
      text: ':warning: I could not read that command. Please try again.',
    });
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(creates);
    expect(h.slack.messages).toHaveLength(posts);
  });

  it('keeps working after all of that', async () => {
    await h.startJob();
  });
});
