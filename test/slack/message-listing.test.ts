import type { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { createSlackCaller, SlackCallError } from '../../src/slack/caller.js';
import {
  eventPayload,
  findByMetadata,
  findByText,
  LISTING_PAGES,
  listPages,
  newestThreadMessages,
} from '../../src/slack/message-listing.js';
import { listen } from '../helpers/http.js';
import { appSlackClient } from '../helpers/slack-client.js';
import { BOT_ID, type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

type Message = Record<string, unknown>;

/**
 * Slack's cursor paging of conversations.history and conversations.replies, which the Slack
 * stand-in does not page: `pages[n]` is answered to the cursor `page-n`, with the next page's
 * cursor while there is one; `faults[n]` answers that page with a 429 instead.
 */
async function pagedSlack(pages: Message[][], faults: Record<number, number> = {}) {
  const cursors: (string | undefined)[] = [];
  const stand = await listen((_req, body, res) => {
    const args = Object.fromEntries(new URLSearchParams(body));
    cursors.push(args.cursor);
    const n = args.cursor ? Number(args.cursor.replace('page-', '')) : 0;
    const retryAfter = faults[n];
    if (retryAfter !== undefined) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfter) });
      res.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
      return;
    }
    const next = n + 1 < pages.length ? `page-${n + 1}` : '';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ok: true,
        messages: pages[n] ?? [],
        has_more: next !== '',
        response_metadata: { next_cursor: next },
      }),
    );
  });
  return { stand, cursors, client: appSlackClient(`${stand.url}/api/`).client };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const callerOf = (client: WebClient) =>
  createSlackCaller({ client, logger: { debug: () => {} }, redact: (text) => text });
const history = (client: WebClient, channel = 'C0DOCS') =>
  listPages(
    callerOf(client),
    'conversations.history',
    { channel, include_all_metadata: true, limit: 200 },
    (c, args) => c.conversations.history(args),
  );
const replies = (client: WebClient, ts = '1700000000.000100') =>
  listPages(
    callerOf(client),
    'conversations.replies',
    { channel: 'C0DOCS', ts, include_all_metadata: true, limit: 200 },
    (c, args) => c.conversations.replies(args),
  );

async function collect<T>(pages: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(page);
  return out;
}

const msg = (ts: string, fields: Message = {}): Message => ({
  ts,
  user: 'U0ALICE',
  text: `m${ts}`,
  ...fields,
});

describe('paging a message listing', () => {
  it('follows Slack’s cursors to the last page, and stops at an empty cursor', async () => {
    const paged = await pagedSlack([[msg('1.1')], [msg('2.1')], [msg('3.1')]]);
    closers.push(paged.stand.close);
    const pages = await collect(history(paged.client));
    expect(pages.map((p) => p.messages?.map((m) => m.ts))).toEqual([['1.1'], ['2.1'], ['3.1']]);
    expect(paged.cursors).toEqual([undefined, 'page-1', 'page-2']);
  });

  it('reads at most ten pages, however many Slack has', async () => {
    const paged = await pagedSlack(Array.from({ length: LISTING_PAGES + 5 }, (_, n) => [msg(`${n}.1`)]));
    closers.push(paged.stand.close);
    expect(await collect(history(paged.client))).toHaveLength(LISTING_PAGES);
    expect(paged.cursors).toHaveLength(LISTING_PAGES);
  });

  it('reads no further page than the caller asks for', async () => {
    const paged = await pagedSlack([[msg('1.1', { bot_id: BOT_ID })], [msg('2.1')]]);
    closers.push(paged.stand.close);
    const { messages } = (await history(paged.client).next()).value ?? {};
    expect(messages?.[0]?.ts).toBe('1.1');
    expect(paged.cursors).toEqual([undefined]);
  });

  it('throws a page’s failure as a typed error, after the pages before it', async () => {
    const paged = await pagedSlack([[msg('1.1')], [msg('2.1')], [msg('3.1')]], { 1: 4 });
    closers.push(paged.stand.close);
    const seen: string[] = [];
    const error = await (async () => {
      for await (const page of history(paged.client)) seen.push(String(page.messages?.[0]?.ts));
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['1.1']);
    expect(error).toBeInstanceOf(SlackCallError);
    expect(error).toMatchObject({ code: 'ratelimited', retryAfterMs: 4_000 });
  });
});

describe('finding the bot’s own post by its metadata', () => {
  const metadata = { eventType: 'docs_agent_post', key: 'outcome:j-1:1' };
  const tagged = (ts: string, botId: string, key = metadata.key) =>
    msg(ts, { bot_id: botId, metadata: { event_type: metadata.eventType, event_payload: { key } } });

  it('finds it on a later page', async () => {
    const paged = await pagedSlack([
      [msg('1.1'), tagged('1.2', BOT_ID, 'outcome:j-1:2')],
      [tagged('2.1', BOT_ID)],
    ]);
    closers.push(paged.stand.close);
    expect(await findByMetadata(history(paged.client), metadata, BOT_ID)).toBe('2.1');
  });

  it('does not take another app’s message with the same metadata for the bot’s', async () => {
    const paged = await pagedSlack([[tagged('1.1', 'B0OTHER')], [tagged('2.1', BOT_ID)]]);
    closers.push(paged.stand.close);
    expect(await findByMetadata(history(paged.client), metadata, BOT_ID)).toBe('2.1');
    // While the bot's id is unknown, any copy counts: posting twice is the worse mistake.
    expect(await findByMetadata(history(paged.client), metadata, undefined)).toBe('1.1');
  });

  it('finds nothing when no message carries exactly that type and key', async () => {
    const paged = await pagedSlack([
      [
        tagged('1.1', BOT_ID, 'outcome:j-1:10'),
        msg('1.2', {
          bot_id: BOT_ID,
          metadata: { event_type: 'other', event_payload: { key: metadata.key } },
        }),
        msg('1.3', { bot_id: BOT_ID, metadata: { event_type: metadata.eventType } }),
        msg('1.4', { bot_id: BOT_ID, text: metadata.key }),
      ],
    ]);
    closers.push(paged.stand.close);
    expect(await findByMetadata(history(paged.client), metadata, BOT_ID)).toBeUndefined();
  });

  it('finds what the bot posted with metadata, as Slack gives it back', async () => {
    const slack: SlackStandIn = await startSlackStandIn();
    closers.push(slack.close);
    const { client } = appSlackClient(slack.apiUrl);
    await client.chat.postMessage({ channel: 'C0DOCS', text: 'other' });
    const posted = await client.chat.postMessage({
      channel: 'C0DOCS',
      text: 'the outcome',
      metadata: { event_type: metadata.eventType, event_payload: { key: metadata.key } },
    });
    expect(await findByMetadata(history(client), metadata, BOT_ID)).toBe(posted.ts);
    expect(await findByMetadata(history(client, 'C0ELSEWHERE'), metadata, BOT_ID)).toBeUndefined();
  });
});

describe('finding the bot’s own post made without metadata, by its text', () => {
  const text = 'Done: <https://github.com/acme/docs/pull/7|the pull request>';

  it('takes only a bot’s message without metadata of exactly that text, the bot’s own once known', async () => {
    const paged = await pagedSlack([
      [
        msg('1.1', { user: 'U0BOB', text }),
        msg('1.2', { bot_id: BOT_ID, text, metadata: { event_type: 'docs_agent_post', event_payload: {} } }),
        msg('1.3', { bot_id: BOT_ID, text: `${text} ` }),
      ],
      [msg('2.1', { bot_id: 'B0OTHER', text }), msg('2.2', { bot_id: BOT_ID, text })],
    ]);
    closers.push(paged.stand.close);
    expect(await findByText(replies(paged.client), text, BOT_ID)).toBe('2.2');
    // While the bot's id is unknown, any app's copy counts: posting twice is the worse mistake.
    expect(await findByText(replies(paged.client), text, undefined)).toBe('2.1');
    expect(await findByText(replies(paged.client), 'Other text', BOT_ID)).toBeUndefined();
  });
});

describe('the event payload a post’s metadata is sent as', () => {
  it('leaves empty fields out, as Slack takes no null, and always carries the key', () => {
    expect(
      eventPayload({
        eventType: 'docs_agent_post',
        key: 'outcome:2:7',
        fields: { kind: 'outcome', run: 2, source: null, covers: undefined, key: 'not this one', zero: 0 },
      }),
    ).toEqual({ kind: 'outcome', run: 2, zero: 0, key: 'outcome:2:7' });
    expect(eventPayload({ eventType: 'docs_agent_root', key: 'root:7' })).toEqual({ key: 'root:7' });
  });
});

describe('the newest messages of a thread', () => {
  it('keeps the newest across pages, oldest first', async () => {
    const paged = await pagedSlack([
      [msg('1.1'), msg('1.2'), msg('1.3')],
      [msg('2.1'), msg('2.2'), msg('2.3')],
      [msg('3.1')],
    ]);
    closers.push(paged.stand.close);
    const kept = await newestThreadMessages(replies(paged.client), 4);
    expect(kept.map((m) => m.ts)).toEqual(['2.1', '2.2', '2.3', '3.1']);
  });

  it('reads each message’s author, app, workspace, subtype and metadata type; skips ones without ts', async () => {
    const paged = await pagedSlack([
      [
        msg('1.1', { user: 'W0GRIDUSER', team: 'T0HOME', user_team: 'T0GUEST' }),
        { user: 'U0ALICE', text: 'no ts' },
        msg('1.2', { user: undefined, bot_id: 'B0OTHER', username: 'Other app', subtype: 'bot_message' }),
        msg('1.3', {
          text: undefined,
          subtype: 'thread_broadcast',
          metadata: { event_type: 'docs_agent_post' },
        }),
      ],
    ]);
    closers.push(paged.stand.close);
    expect(await newestThreadMessages(replies(paged.client), 10)).toEqual([
      {
        ts: '1.1',
        user: 'W0GRIDUSER',
        botId: undefined,
        username: undefined,
        text: 'm1.1',
        eventType: undefined,
        team: 'T0GUEST',
        subtype: undefined,
      },
      {
        ts: '1.2',
        user: undefined,
        botId: 'B0OTHER',
        username: 'Other app',
        text: 'm1.2',
        eventType: undefined,
        team: undefined,
        subtype: 'bot_message',
      },
      {
        ts: '1.3',
        user: 'U0ALICE',
        botId: undefined,
        username: undefined,
        text: '',
        eventType: 'docs_agent_post',
        team: undefined,
        subtype: 'thread_broadcast',
      },
    ]);
  });

  it('reads a thread as Slack gives it back, a message with no team included', async () => {
    const slack: SlackStandIn = await startSlackStandIn();
    closers.push(slack.close);
    const root = '1700000000.000100';
    slack.humans.push(
      { channel: 'C0DOCS', ts: root, user: 'U0ALICE', text: 'fix the intro' },
      {
        channel: 'C0DOCS',
        ts: '1700000001.000100',
        thread_ts: root,
        user: 'W0GRIDUSER',
        text: 'and',
        team: null,
      },
      { channel: 'C0DOCS', ts: '1700000002.000100', thread_ts: root, user: 'U0BOB', text: 'the outro' },
    );
    const { client } = appSlackClient(slack.apiUrl);
    const kept = await newestThreadMessages(replies(client, root), 2);
    expect(kept.map(({ ts, user, team }) => ({ ts, user, team }))).toEqual([
      { ts: '1700000001.000100', user: 'W0GRIDUSER', team: undefined },
      { ts: '1700000002.000100', user: 'U0BOB', team: 'T0TEST' },
    ]);
  });
});
