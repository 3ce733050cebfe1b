/**
 * Slack's Block Kit rules for the blocks the bot sends (api.slack.com/reference/block-kit),
 * checked by the Slack stand-in on every call that carries blocks or a view, so every test
 * that makes the bot post also checks what it posted.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function textObject(value: unknown, where: string, max: number, problems: string[], plainOnly = false) {
  if (!isObj(value)) return problems.push(`${where}: not a text object`);
  if (value.type !== 'plain_text' && (plainOnly || value.type !== 'mrkdwn'))
    return problems.push(
      `${where}: text type ${String(value.type)}${plainOnly ? ' (plain_text required)' : ''}`,
    );
  if (typeof value.text !== 'string' || value.text.length === 0) return problems.push(`${where}: empty text`);
  if (value.text.length > max)
    problems.push(`${where}: text of ${value.text.length} characters (limit ${max})`);
  return undefined;
}

function element(el: unknown, where: string, problems: string[]) {
  if (!isObj(el)) return problems.push(`${where}: not an object`);
  if (typeof el.action_id === 'string' && el.action_id.length > 255)
    problems.push(`${where}: action_id too long`);
  switch (el.type) {
    case 'button':
      textObject(el.text, `${where}.text`, 75, problems, true);
      if (typeof el.url === 'string' && el.url.length > 3000) problems.push(`${where}: url too long`);
      if (typeof el.value === 'string' && el.value.length > 2000) problems.push(`${where}: value too long`);
      if (el.style !== undefined && el.style !== 'primary' && el.style !== 'danger')
        problems.push(`${where}: style ${String(el.style)}`);
      return undefined;
    case 'plain_text_input': {
      const max = typeof el.max_length === 'number' ? el.max_length : 3000;
      if (max > 3000) problems.push(`${where}: max_length ${max} (limit 3000)`);
      if (typeof el.initial_value === 'string' && el.initial_value.length > max)
        problems.push(`${where}: initial_value longer than max_length`);
      if (el.placeholder !== undefined)
        textObject(el.placeholder, `${where}.placeholder`, 150, problems, true);
      return undefined;
    }
    case 'feedback_buttons':
      // Slack: both buttons required, plain_text of at most 75 characters, a value of at most 2000.
      for (const side of ['positive_button', 'negative_button']) {
        const button = el[side];
        if (!isObj(button)) {
          problems.push(`${where}.${side}: missing`);
          continue;
        }
        textObject(button.text, `${where}.${side}.text`, 75, problems, true);
        if (typeof button.value !== 'string' || button.value.length === 0 || button.value.length > 2000)
          problems.push(`${where}.${side}: value of 1 to 2000 characters`);
        if (typeof button.accessibility_label === 'string' && button.accessibility_label.length > 75)
          problems.push(`${where}.${side}: accessibility_label too long`);
      }
      return undefined;
    case 'conversations_select':
    case 'channels_select':
      if (el.placeholder !== undefined)
        textObject(el.placeholder, `${where}.placeholder`, 150, problems, true);
      return undefined;
    default:
      return problems.push(`${where}: element type ${String(el.type)} not known here`);
  }
}

/** Problems of a block list, empty when Slack would accept it. */
export function blockProblems(blocks: unknown, maxBlocks: number): string[] {
  const problems: string[] = [];
  if (!Array.isArray(blocks)) return ['blocks: not an array'];
  if (blocks.length === 0) problems.push('blocks: empty');
  if (blocks.length > maxBlocks) problems.push(`blocks: ${blocks.length} (limit ${maxBlocks})`);
  for (const [i, block] of blocks.entries()) checkBlock(block, `blocks[${i}]`, problems);
  return problems;
}

function checkBlock(block: unknown, where: string, problems: string[]) {
  if (!isObj(block)) return problems.push(`${where}: not an object`);
  if (typeof block.block_id === 'string' && block.block_id.length > 255)
    problems.push(`${where}: block_id too long`);
  switch (block.type) {
    case 'section': {
      if (block.text === undefined && block.fields === undefined)
        problems.push(`${where}: neither text nor fields`);
      if (block.text !== undefined) textObject(block.text, `${where}.text`, 3000, problems);
      if (block.fields !== undefined) {
        if (!Array.isArray(block.fields) || block.fields.length === 0 || block.fields.length > 10)
          problems.push(`${where}: 1 to 10 fields`);
        else
          for (const [j, f] of block.fields.entries()) textObject(f, `${where}.fields[${j}]`, 2000, problems);
      }
      if (block.accessory !== undefined) element(block.accessory, `${where}.accessory`, problems);
      return undefined;
    }
    case 'header':
      return textObject(block.text, `${where}.text`, 150, problems, true);
    case 'context':
      if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 10)
        return problems.push(`${where}: 1 to 10 elements`);
      for (const [j, e] of block.elements.entries()) textObject(e, `${where}.elements[${j}]`, 3000, problems);
      return undefined;
    case 'actions':
      if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 25)
        return problems.push(`${where}: 1 to 25 elements`);
      for (const [j, e] of block.elements.entries()) element(e, `${where}.elements[${j}]`, problems);
      return undefined;
    case 'context_actions':
      // Slack: feedback buttons and icon buttons only, at most 5.
      if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 5)
        return problems.push(`${where}: 1 to 5 elements`);
      for (const [j, e] of block.elements.entries()) {
        if (!isObj(e) || (e.type !== 'feedback_buttons' && e.type !== 'icon_button'))
          problems.push(`${where}.elements[${j}]: only feedback_buttons or icon_button`);
        else element(e, `${where}.elements[${j}]`, problems);
      }
      return undefined;
    case 'divider':
      return undefined;
    case 'input':
      textObject(block.label, `${where}.label`, 2000, problems, true);
      if (block.hint !== undefined) textObject(block.hint, `${where}.hint`, 2000, problems, true);
      return element(block.element, `${where}.element`, problems);
    default:
      return problems.push(`${where}: block type ${String(block.type)} not known here`);
  }
}

/** Problems of a modal or Home tab view. */
export function viewProblems(view: unknown): string[] {
  if (!isObj(view)) return ['view: not an object'];
  const problems = blockProblems(view.blocks, 100);
  if (view.type !== 'modal' && view.type !== 'home') problems.push(`view: type ${String(view.type)}`);
  if (view.type === 'modal') {
    textObject(view.title, 'view.title', 24, problems, true);
    if (view.submit !== undefined) textObject(view.submit, 'view.submit', 24, problems, true);
    if (view.close !== undefined) textObject(view.close, 'view.close', 24, problems, true);
  }
  if (typeof view.private_metadata === 'string' && view.private_metadata.length > 3000)
    problems.push('view: private_metadata too long');
  if (typeof view.callback_id === 'string' && view.callback_id.length > 255)
    problems.push('view: callback_id too long');
  return problems;
}
