import { afterEach, describe, expect, it } from 'vitest';
import {
  actionButton,
  actions,
  context,
  divider,
  fieldsSection,
  header,
  LIMITS,
  linkButton,
  mrkdwn,
  plain,
  section,
} from '../../src/slack/blocks.js';
import { checkUrl } from '../../src/slack/links.js';
import { escapeMrkdwn, joinMrkdwn, md, userMention } from '../../src/slack/mrkdwn.js';
import { appSlackClient } from '../helpers/slack-client.js';
import { type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

const long = (n: number, char = 'a') => char.repeat(n);
const textOf = (block: Record<string, unknown>) => (block.text as { text: string }).text;
const url = (length: number) => {
  const base = 'https://github.com/acme/docs/pull/7?q=';
  const checked = checkUrl(base + long(length - base.length, 'x'));
  if (!checked) throw new Error('expected a safe address');
  return checked;
};

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

describe('Block Kit builders keep every text within Slack’s limits', () => {
  it('shortens a header to 150 characters, as plain text Slack does not parse', () => {
    const block = header(`<!channel> ${long(200)}`);
    expect(block.text).toMatchObject({ type: 'plain_text', emoji: true });
    expect(textOf(block)).toHaveLength(LIMITS.headerText);
    expect(textOf(block).endsWith('…')).toBe(true);
    expect(textOf(header('Docs job'))).toBe('Docs job');
  });

  it('shortens a section to 3,000 characters without cutting a mention in half', () => {
    const text = joinMrkdwn([escapeMrkdwn(long(2_990)), userMention('U0ALICE'), md` and more`], md``);
    const shown = textOf(section(text));
    expect(shown.length).toBeLessThanOrEqual(LIMITS.sectionText);
    expect(shown).not.toContain('<@U0');
    expect(shown.endsWith('…')).toBe(true);
    expect(section(md`short`)).toEqual({ type: 'section', text: { type: 'mrkdwn', text: 'short' } });
  });

  it('does not cut an escape in half', () => {
    const shown = mrkdwn(escapeMrkdwn(`${long(8)}<b>`), 10).text;
    expect(shown).toBe(`${long(8)}…`);
  });

  it('adds an accessory only when given one', () => {
    const button = actionButton('Stop', 'stop_job', 'j-1');
    expect(section(md`x`, button)).toMatchObject({ accessory: button });
    expect(section(md`x`)).not.toHaveProperty('accessory');
  });

  it('keeps ten fields of at most 2,000 characters each', () => {
    const block = fieldsSection(Array.from({ length: 12 }, (_, i) => escapeMrkdwn(`${i}:${long(2_500)}`)));
    const fields = block.fields as { type: string; text: string }[];
    expect(fields).toHaveLength(LIMITS.fields);
    expect(fields.every((f) => f.type === 'mrkdwn' && f.text.length <= LIMITS.fieldText)).toBe(true);
    expect(fields.map((f) => f.text.split(':')[0])).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
    ]);
  });

  it('keeps the first ten context elements', () => {
    const block = context(...Array.from({ length: 12 }, (_, i) => md`${i}`));
    expect((block.elements as unknown[]).map((e) => (e as { text: string }).text)).toEqual(
      Array.from({ length: 10 }, (_, i) => String(i)),
    );
  });

  it('a link button never cuts its address, only its label; it is primary only when asked', () => {
    const address = url(LIMITS.url);
    const button = linkButton(long(100), address, 'open_pr');
    expect(button.url).toBe(address);
    expect(textOf(button)).toHaveLength(LIMITS.buttonText);
    expect(button).not.toHaveProperty('style');
    expect(linkButton('Open', address, 'open_pr', true)).toMatchObject({
      style: 'primary',
      action_id: 'open_pr',
    });
  });

  it('an action button’s value is cut to 2,000 characters', () => {
    const button = actionButton('Retry', 'retry_job', long(2_500));
    expect(String(button.value)).toHaveLength(LIMITS.buttonValue);
    expect(actionButton('Retry', 'retry_job', 'j-1').value).toBe('j-1');
  });

  it('keeps the first 25 elements of an actions block', () => {
    const elements = Array.from({ length: 30 }, (_, i) => actionButton(`b${i}`, `a${i}`, `${i}`));
    expect(actions(...elements).elements).toEqual(elements.slice(0, LIMITS.actionElements));
  });

  it('plain text is cut to the limit given', () => {
    expect(plain('Send to docs agent', 10)).toEqual({ type: 'plain_text', text: 'Send to d…', emoji: true });
  });
});

describe('what the builders make, posted to Slack', () => {
  it('is taken whole however long the texts put in', async () => {
    slack = await startSlackStandIn();
    const { client } = appSlackClient(slack.apiUrl);
    const huge = escapeMrkdwn(long(10_000));
    const blocks = [
      header(long(1_000)),
      section(huge, linkButton(long(200), url(LIMITS.url), 'open_pr')),
      fieldsSection(Array.from({ length: 15 }, () => huge)),
      context(...Array.from({ length: 15 }, () => huge)),
      divider(),
      actions(...Array.from({ length: 30 }, (_, i) => actionButton(long(200), `a${i}`, long(5_000)))),
    ];
    const answer = await client.chat.postMessage({
      channel: 'C0DOCS',
      text: 'Docs job',
      blocks: blocks as never,
    });
    expect(answer.ok).toBe(true);
    expect(slack.invalid).toEqual([]);
    expect(slack.messages[0]?.blocks).toHaveLength(blocks.length);
  });

  it('would be refused had the header not been shortened', async () => {
    slack = await startSlackStandIn();
    const { client } = appSlackClient(slack.apiUrl);
    const raw = { type: 'header', text: { type: 'plain_text', text: long(LIMITS.headerText + 1) } };
    await expect(
      client.chat.postMessage({ channel: 'C0DOCS', text: 'x', blocks: [raw] }),
    ).rejects.toMatchObject({
      data: { error: 'invalid_blocks' },
    });
  });
});
