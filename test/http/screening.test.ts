import type { IncomingMessage } from 'node:http';
import type { App } from '@slack/bolt';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RETRY_ACTION_ID } from '../../src/blocks/status-card.js';
import { MAX_BODY_BYTES, MAX_CLOCK_SKEW_S, screenRequest, screenRequests } from '../../src/http/screening.js';
import { registerListeners } from '../../src/listeners/index.js';
import { type ListenerApp, startListenerApp } from '../helpers/listener-app.js';
import { createListenerWorld, type ListenerWorld } from '../helpers/listener-deps.js';
import { buttonClick, messageShortcut, viewSubmission } from '../helpers/payloads.js';

/**
 * Interactivity as Slack sends it, signed, to the real receiver with every listener registered
 * (the payloads are those of Slack's reference pages, from test/helpers/payloads.ts), and the
 * same payloads missing what Bolt reads before any listener runs.
 */
let w: ListenerWorld;
let app: ListenerApp;
beforeAll(async () => {
  w = createListenerWorld();
  app = await startListenerApp(w, registerListeners);
});
afterAll(async () => {
  await app.stop();
  await w.stop();
});
let logsBefore = 0;
beforeEach(() => {
  logsBefore = w.logs.length;
});
const newLogs = () => w.logs.slice(logsBefore);
const linesWith = (text: string) => newLogs().filter((l) => l.includes(text));

/** Words a person might have written, which no log line may carry. */
const WORDS = 'my private words <!channel>';
const click = () =>
  buttonClick({ action_id: RETRY_ACTION_ID, value: '1' }, { messageTs: '1700000000.000001' });
const without = (payload: Record<string, unknown>, ...keys: string[]) =>
  Object.fromEntries(Object.entries(payload).filter(([k]) => !keys.includes(k)));

describe('interactivity Bolt cannot read', () => {
  it.each([
    ['a click without `user`', () => without(click(), 'user'), 'block_actions', ['user: invalid_type']],
    [
      'a click without `actions`',
      () => without(click(), 'actions'),
      'block_actions',
      ['actions: invalid_type'],
    ],
    ['a click with no action', () => ({ ...click(), actions: [] }), 'block_actions', ['actions: too_small']],
    [
      'a click whose action has no id',
      () => ({ ...click(), actions: [{ type: 'button', value: WORDS }] }),
      'block_actions',
      ['actions.0.action_id: invalid_type'],
    ],
    [
      'a click whose channel is null',
      () => ({ ...click(), channel: null }),
      'block_actions',
      ['channel: invalid_type'],
    ],
    [
      'a message shortcut without `user`',
      () => without(messageShortcut({ ts: '1700000000.000002', text: WORDS }), 'user'),
      'message_action',
      ['user: invalid_type'],
    ],
    [
      'a modal submission without `view`',
      () =>
        without(viewSubmission({ callback_id: 'send_to_docs_agent_modal' }, { instruction: WORDS }), 'view'),
      'view_submission',
      ['view: invalid_type'],
    ],
    [
      'a payload of a type this app does not read',
      () => ({ ...click(), type: 'something_new' }),
      'something_new',
      ['type: not_read'],
    ],
  ])(
    '%s is answered 200 at once, logged once by its failing fields, and reaches no listener',
    async (_what, payload, type, fields) => {
      const res = await app.interact({ ...payload(), note: WORDS });
      expect(res.status).toBe(200);
      const [line, ...more] = linesWith('a request from Slack could not be read');
      expect(more).toEqual([]);
      expect(JSON.parse(line as string)).toMatchObject({ level: 'warn', type, fields });
      // Nothing of Bolt's own failure, and nothing a person wrote.
      expect(newLogs().filter((l) => /"level":"(warn|error)"/.test(l))).toHaveLength(1);
      expect(newLogs().join('\n')).not.toContain('private words');
      expect(w.slack.respond).not.toHaveBeenCalled();
      expect(w.slack.openView).not.toHaveBeenCalled();
      expect(w.jobCount()).toBe(0);
    },
  );

  it('an event that is not an object is answered 200 and logged, not failed inside Bolt', async () => {
    const res = await app.json({ type: 'event_callback', team_id: 'T0TEST', event: WORDS, event_id: 'Ev1' });
    expect(res.status).toBe(200);
    expect(JSON.parse(linesWith('could not be read')[0] as string).fields).toEqual(['event: invalid_type']);
  });

  it('a well-formed click on a button no listener handles is answered at once, and said', async () => {
    const res = await app.interact(
      buttonClick({ action_id: 'a_retired_button', value: 'x' }, { messageTs: '1.2' }),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(linesWith('no listener answered')[0] as string)).toMatchObject({
      type: 'block_actions',
    });
  });

  it('hands a readable payload to its listener as before', async () => {
    const res = await app.interact(
      messageShortcut({ ts: '1700000000.000003', text: 'How do I rotate keys?' }),
    );
    expect(res.status).toBe(200);
    expect(w.slack.openView).toHaveBeenCalledOnce();
    expect(linesWith('could not be read')).toEqual([]);
    expect(linesWith('no listener answered')).toEqual([]);
  });
});

describe('screenRequests', () => {
  it('passes on a listener’s own failure, so the receiver still answers it as failed', async () => {
    const failing: Pick<App, 'processEvent'> = {
      processEvent: () => Promise.reject(new Error('listener bug')),
    };
    screenRequests(failing, w.ctx.logger);
    let acked = false;
    const ack = async () => {
      acked = true;
    };
    await expect(failing.processEvent({ body: { command: '/docs-agent' }, ack } as never)).rejects.toThrow(
      'listener bug',
    );
    expect(acked).toBe(false);
  });
});

const NOW_MS = 1_700_000_000_000;
const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const signed = (extra: Record<string, string> = {}) =>
  request({
    'x-slack-signature': 'v0=abc',
    'x-slack-request-timestamp': String(NOW_MS / 1000),
    'content-type': 'application/json',
    'content-length': '100',
    ...extra,
  });

describe('screenRequest', () => {
  it('lets a signed, timely, small body of a known type through', () => {
    expect(screenRequest(signed(), NOW_MS)).toBeUndefined();
    expect(
      screenRequest(signed({ 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }), NOW_MS),
    ).toBeUndefined();
  });

  it("lets only a small unsigned form through, as Slack's ssl_check", () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '40' };
    expect(screenRequest(request(form), NOW_MS)).toBeUndefined();
    expect(screenRequest(request({ ...form, 'content-length': '4096' }), NOW_MS)?.status).toBe(401);
    expect(
      screenRequest(request({ 'content-type': 'application/json', 'content-length': '40' }), NOW_MS)?.status,
    ).toBe(401);
  });

  it('refuses a timestamp outside the allowed skew either way', () => {
    const at = (s: number) => signed({ 'x-slack-request-timestamp': String(s) });
    expect(screenRequest(at(NOW_MS / 1000 + MAX_CLOCK_SKEW_S + 1), NOW_MS)?.status).toBe(401);
    expect(screenRequest(at(NOW_MS / 1000 - MAX_CLOCK_SKEW_S - 1), NOW_MS)?.status).toBe(401);
    expect(screenRequest(at(NOW_MS / 1000 - MAX_CLOCK_SKEW_S), NOW_MS)).toBeUndefined();
  });

  it('refuses unknown body types and bodies over the limit', () => {
    expect(screenRequest(signed({ 'content-type': 'text/plain' }), NOW_MS)?.status).toBe(415);
    expect(screenRequest(signed({ 'content-length': String(MAX_BODY_BYTES + 1) }), NOW_MS)?.status).toBe(413);
  });
});
