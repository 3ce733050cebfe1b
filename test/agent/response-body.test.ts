import { describe, expect, it } from 'vitest';
import {
  clipDetail,
  describeBody,
  MAX_ERROR_BODY_BYTES,
  MAX_RESPONSE_BYTES,
  readBodyCapped,
} from '../../src/agent/response-body.js';
import { MAX_ERROR_DETAIL_CHARS } from '../../src/agent/schema.js';
import { createRedactor } from '../../src/logging/logger.js';

const KEY = 'mint_not-a-real-secret-key';
const redact = createRedactor([KEY]);

/** A streamed body that records how much of it was pulled and whether it was cancelled. */
function streamed(chunks: (string | Uint8Array)[] | 'endless', headers: Record<string, string> = {}) {
  const seen = { pulls: 0, cancelled: false };
  const encoder = new TextEncoder();
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      seen.pulls++;
      if (chunks === 'endless') return controller.enqueue(new Uint8Array(1_024).fill(97));
      const chunk = chunks[next++];
      if (chunk === undefined) return controller.close();
      controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { response: new Response(body, { headers }), seen };
}

describe('readBodyCapped', () => {
  it('reads a body under the limit whole, across chunks, multi-byte characters split between them', async () => {
    const euro = new TextEncoder().encode('€');
    const { response, seen } = streamed(['{"id":"', euro.subarray(0, 1), euro.subarray(1), '"}']);
    expect(await readBodyCapped(response, 100)).toEqual({ text: '{"id":"€"}', truncated: false });
    expect(seen.cancelled).toBe(false);
  });

  it('reads exactly the limit as a whole body', async () => {
    const { response } = streamed(['abcd', 'efgh']);
    expect(await readBodyCapped(response, 8)).toEqual({ text: 'abcdefgh', truncated: false });
  });

  it('stops at the limit, keeps only its bytes and cancels the rest', async () => {
    const { response, seen } = streamed(['abcd', 'efgh', 'ijkl']);
    expect(await readBodyCapped(response, 6)).toEqual({ text: 'abcdef', truncated: true });
    expect(seen.cancelled).toBe(true);
  });

  it('never holds an endless body: it reads about the limit and stops', async () => {
    const { response, seen } = streamed('endless');
    const { text, truncated } = await readBodyCapped(response, 10_000);
    expect(truncated).toBe(true);
    expect(text).toBe('a'.repeat(10_000));
    expect(seen.cancelled).toBe(true);
    expect(seen.pulls).toBeLessThan(20);
  });

  it('refuses a declared length over the limit without reading a byte', async () => {
    const { response, seen } = streamed(['x'.repeat(50)], { 'content-length': '101' });
    expect(await readBodyCapped(response, 100)).toEqual({ text: '', truncated: true });
    expect(seen.cancelled).toBe(true);
    expect(seen.pulls).toBeLessThanOrEqual(1);
  });

  it('reads a body whose declared length is within the limit, or not a number', async () => {
    expect(await readBodyCapped(streamed(['ok'], { 'content-length': '2' }).response, 2)).toEqual({
      text: 'ok',
      truncated: false,
    });
    expect(await readBodyCapped(streamed(['ok'], { 'content-length': 'lots' }).response, 2)).toEqual({
      text: 'ok',
      truncated: false,
    });
  });

  it('answers an empty text for an answer without a body', async () => {
    expect(await readBodyCapped(new Response(null, { status: 204 }), 10)).toEqual({
      text: '',
      truncated: false,
    });
  });

  it('fails when the body breaks off (the client reports the answer as cut off)', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"id":'));
        controller.error(new Error('terminated'));
      },
    });
    await expect(readBodyCapped(new Response(body), 100)).rejects.toThrow('terminated');
  });

  it('reads at most 1 MiB of a job and 64 KiB of an error', () => {
    expect(MAX_RESPONSE_BYTES).toBe(1_048_576);
    expect(MAX_ERROR_BODY_BYTES).toBe(65_536);
  });
});

describe('clipDetail', () => {
  it('keeps one line: whitespace, C0 and C1 control characters collapse to one space', () => {
    expect(clipDetail('  bad\r\n\tprompt\u0000\u0007here\u007f\u0085\u009bnow  ')).toBe(
      'bad prompt here now',
    );
    expect(clipDetail('\u001b[31mred')).toBe('[31mred');
  });

  it('keeps text up to the limit as it is and cuts longer text with an ellipsis, at the limit', () => {
    const exact = 'x'.repeat(MAX_ERROR_DETAIL_CHARS);
    expect(clipDetail(exact)).toBe(exact);
    const cut = clipDetail(`${exact}y`);
    expect(cut).toHaveLength(MAX_ERROR_DETAIL_CHARS);
    expect(cut.endsWith('x…')).toBe(true);
    expect(clipDetail('abcdefghij', 5)).toBe('abcd…');
  });

  it('does not end the cut on a space or half a surrogate pair', () => {
    expect(clipDetail('abc  defgh', 5)).toBe('abc…');
    // The fifth character would be the first half of the emoji: the cut moves before it.
    const clipped = clipDetail(`abc${'😀'.repeat(5)}`, 5);
    expect(clipped).toBe('abc…');
    expect(clipDetail(`abc${'😀'.repeat(5)}`, 6)).toBe('abc😀…');
    // The first and the last high surrogates, before a character that is none.
    expect(clipDetail('abcd\u{10000}xyz', 6)).toBe('abcd…');
    expect(clipDetail('abcd\u{10FC00}xyz', 6)).toBe('abcd…');
    expect(clipped).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});

describe('describeBody', () => {
  it('shows the documented {error} text, on one line, not the JSON around it', () => {
    expect(describeBody('{"error":"Prompt\\nis empty"}', redact)).toBe('Prompt is empty');
  });

  it('shows a body in any other shape as plain text, clipped', () => {
    expect(describeBody('<html>\n<b>502</b>\n</html>', redact)).toBe('<html> <b>502</b> </html>');
    expect(describeBody('{"message":"nope"}', redact)).toBe('{"message":"nope"}');
    expect(describeBody('{"error": 42}', redact)).toBe('{"error": 42}');
    expect(describeBody('', redact)).toBe('');
    expect(describeBody('x'.repeat(5_000), redact)).toHaveLength(MAX_ERROR_DETAIL_CHARS);
  });

  it('masks a secret the API echoes, before cutting, so no cut leaves a piece of it', () => {
    for (const at of [0, 280, 290, 299]) {
      const shown = describeBody(JSON.stringify({ error: `${'e'.repeat(at)}${KEY} rejected` }), redact);
      const plain = describeBody(`${'p'.repeat(at)}${KEY} rejected`, redact);
      for (const text of [shown, plain]) {
        expect(text.length).toBeLessThanOrEqual(MAX_ERROR_DETAIL_CHARS);
        expect(text).not.toContain('mint_not');
        expect(text).not.toContain('real-secret');
      }
    }
  });
});
