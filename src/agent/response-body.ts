import { agentErrorSchema, MAX_ERROR_DETAIL_CHARS } from './schema.js';

/**
 * Most bytes read of a successful answer (1 MiB). An agent job is well under 10 KB; a longer
 * body is cut off here, the request aborted, and the answer treated as malformed
 * ({@link AgentResponseTooLargeError}), so no answer can fill the process's memory.
 */
export const MAX_RESPONSE_BYTES = 1_048_576;
/**
 * Most bytes read of an error answer (64 KiB): `{"error": string}` is a sentence. The rest is
 * not read; only the first {@link MAX_ERROR_DETAIL_CHARS} characters of it are ever shown.
 */
export const MAX_ERROR_BODY_BYTES = 65_536;

/**
 * Reads at most `limit` bytes of a body, as a stream: once more arrive, reading stops and the
 * body is cancelled (which aborts the request), so a huge or endless body is never held whole.
 * A `Content-Length` over the limit is refused before reading anything.
 */
export async function readBodyCapped(
  response: Response,
  limit: number,
): Promise<{ text: string; truncated: boolean }> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  const body = response.body;
  if (!body) return { text: '', truncated: false };
  if (declared > limit) {
    await body.cancel().catch(() => undefined);
    return { text: '', truncated: true };
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - total));
      total = limit;
      await reader.cancel().catch(() => undefined);
      return { text: decode(chunks, total), truncated: true };
    }
    chunks.push(value);
    total += value.byteLength;
  }
  return { text: decode(chunks, total), truncated: false };
}

function decode(chunks: Uint8Array[], total: number): string {
  const all = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** One line of at most `max` characters: whitespace and control characters collapsed, never half a surrogate pair. */
export function clipDetail(text: string, max = MAX_ERROR_DETAIL_CHARS): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const line = text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  if (line.length <= max) return line;
  let cut = max - 1;
  const code = line.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return `${line.slice(0, cut).trimEnd()}…`;
}

/**
 * The API's own explanation, at most {@link MAX_ERROR_DETAIL_CHARS} characters on one line; it
 * may be shown to users, so secrets are masked (before cutting, so no cut can split a secret out
 * of the mask's reach).
 */
export function describeBody(text: string, redact: (s: string) => string): string {
  try {
    const parsed = agentErrorSchema.safeParse(JSON.parse(text));
    if (parsed.success) return clipDetail(redact(parsed.data.error));
  } catch {
    // Not JSON (or cut off): the API, or a proxy in front of it, answered in plain text.
  }
  return clipDetail(redact(text));
}
