import { describe, expect, it } from 'vitest';
import {
  BLOCK,
  INPUT_ACTION,
  MODAL_CALLBACK_ID,
  MODAL_FILES,
  type ModalMetadata,
  modalFiles,
  modalText,
  sendModal,
} from '../../../src/features/shortcut/modal.js';
import { viewProblems } from '../../helpers/block-kit.js';

const PERMALINK = 'https://acme.slack.com/archives/C0DOCS/p1700000000000100';
const META: ModalMetadata = {
  channel: 'C0DOCS',
  ts: '1700000000.000100',
  author: 'U0BOB',
  permalink: PERMALINK,
};

type Input = {
  type: string;
  block_id?: string;
  elements?: { text: string }[];
  element?: {
    type: string;
    action_id: string;
    max_length?: number;
    initial_value?: string;
    initial_conversation?: string;
  };
};
const modal = (
  fields: { text?: string; author?: string; metadata?: Partial<ModalMetadata>; max?: number } = {},
) => {
  const view = sendModal({
    message: { text: fields.text ?? 'How do I rotate keys?', author: fields.author ?? 'U0BOB' },
    metadata: { ...META, ...fields.metadata },
    maxPromptChars: fields.max ?? 10_000,
  });
  const blocks = view.blocks as Input[];
  return { view, blocks, byId: (id: string) => blocks.find((b) => b.block_id === id) };
};
const contextText = (blocks: Input[]) =>
  blocks.filter((b) => b.type === 'context').map((b) => b.elements?.[0]?.text);

describe('sendModal', () => {
  it('is a modal Slack accepts, with the instruction, the message and the channel as inputs', () => {
    const { view, byId } = modal();
    expect(viewProblems(view)).toEqual([]);
    expect(view).toMatchObject({ type: 'modal', callback_id: MODAL_CALLBACK_ID });
    for (const id of Object.values(BLOCK)) expect(byId(id)?.element?.action_id).toBe(INPUT_ACTION);
    expect(byId(BLOCK.channel)?.element).toMatchObject({
      type: 'conversations_select',
      initial_conversation: 'C0DOCS',
      // Channels only, where a job's thread can be: never a direct message with another bot.
      filter: { include: ['public', 'private'], exclude_bot_users: true },
    });
    expect(byId(BLOCK.instruction)?.element).toMatchObject({ type: 'plain_text_input', multiline: true });
    expect(byId(BLOCK.message)).toMatchObject({ optional: true, element: { multiline: true } });
    expect(byId(BLOCK.instruction)).not.toHaveProperty('optional');
  });

  it('holds no more of an instruction than the agent takes, nor more than Slack allows', () => {
    expect(modal({ max: 500 }).byId(BLOCK.instruction)?.element?.max_length).toBe(500);
    expect(modal({ max: 100_000 }).byId(BLOCK.instruction)?.element?.max_length).toBe(3_000);
  });

  it('fills in the message as readable plain text, shortened to what the input holds', () => {
    const { byId } = modal({ text: 'Ask <!here> about <https://x.example|the docs> &amp; more' });
    expect(byId(BLOCK.message)?.element?.initial_value).toBe(
      'Ask @here about the docs (https://x.example) & more',
    );
    const long = modal({ text: 'm'.repeat(5_000) }).byId(BLOCK.message)?.element?.initial_value;
    expect(long).toHaveLength(3_000);
    expect(modal({ text: '   ' }).byId(BLOCK.message)?.element).not.toHaveProperty('initial_value');
  });

  it('links the message, mentions its author and names its channel', () => {
    expect(contextText(modal().blocks)).toEqual([`<${PERMALINK}|This message> by <@U0BOB> in <#C0DOCS>`]);
  });

  it('shows an app author inert, and an address it did not check as no link', () => {
    const { blocks } = modal({
      author: '<!channel> bot',
      metadata: { author: '<!channel> bot', permalink: 'javascript:alert(1)' },
    });
    expect(contextText(blocks)).toEqual(['This message by &lt;!channel&gt; bot in <#C0DOCS>']);
  });

  it('leaves the channel to the person for a message in a direct message', () => {
    const select = modal({ metadata: { channel: 'D0DM' } }).byId(BLOCK.channel)?.element;
    expect(select).not.toHaveProperty('initial_conversation');
  });

  it('says before the job starts that files reach the agent by name only', () => {
    const { blocks } = modal({ metadata: { files: [{ name: 'spec.pdf', type: 'pdf' }] } });
    expect(contextText(blocks)[1]).toContain('it gets only their names and types (`spec.pdf`)');
    expect(contextText(modal().blocks)).toHaveLength(1);
  });

  it('keeps its private metadata within 3,000 characters', () => {
    const { view } = modal({ metadata: { permalink: `${PERMALINK}?${'p'.repeat(4_000)}` } });
    expect((view.private_metadata as string).length).toBeLessThanOrEqual(3_000);
    expect(viewProblems(view)).toEqual([]);
    expect(JSON.parse(modal().view.private_metadata as string)).toEqual(META);
  });
});

describe('modalFiles', () => {
  it(`remembers at most ${MODAL_FILES} files, with names of 100 and types of 50 characters`, () => {
    const files = Array.from({ length: 14 }, (_, i) => ({
      name: `${i}-${'n'.repeat(300)}`,
      type: 't'.repeat(80),
    }));
    const kept = modalFiles(files);
    expect(kept).toHaveLength(MODAL_FILES);
    expect(kept[0]?.name).toHaveLength(100);
    expect(kept[0]?.name.startsWith('0-')).toBe(true);
    expect(kept[0]?.type).toHaveLength(50);
    expect(modalFiles([{ name: 'a.png', type: 'png' }])).toEqual([{ name: 'a.png', type: 'png' }]);
  });
});

describe('modalText', () => {
  it('is plain text (Slack parses no markup under a modal input)', () => {
    const all = [
      ...Object.entries(modalText)
        .filter(([name]) => name !== 'tooLong')
        .map(([, f]) => (f as () => string)()),
      modalText.tooLong(12_345, 10_000),
    ];
    for (const said of all) {
      expect(said).not.toMatch(/[<>*`]|&[a-z]+;|:[a-z_]+:/);
      expect(said.length).toBeGreaterThan(0);
    }
  });

  it('gives an overlong instruction its length and the limit, with separators', () => {
    expect(modalText.tooLong(12_345, 10_000)).toBe(
      'That is 12,345 characters; the limit is 10,000. Shorten it, or send the rest as a follow-up in the job’s thread.',
    );
  });
});
