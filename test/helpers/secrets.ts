/**
 * Secrets as awkward as real ones get: quotes, backslashes, percent signs, plus signs, slashes
 * and spaces, each with a marker (`Q7…`) so a partly masked secret still shows. They keep the
 * prefixes configuration checks for, but no character after the prefix fits a token shape, so
 * only redaction by value can hide them.
 */
export const AWKWARD = {
  botToken: 'xoxb-"bot\\ Q7bot% 2F+/tok"',
  signingSecret: 'sign "in\\g Q7sig% +/secret',
  apiKey: 'mint_"key\\ Q7key%25 +/x',
  appToken: 'xapp-"app\\ Q7app% +/tok',
  dbPassword: 'db "pa\\ss Q7dbp% +/w0rd',
} as const;

/** The written forms a leaked secret may take: the checks below look for each. */
export function writtenForms(secret: string): Record<string, string> {
  return {
    raw: secret,
    'JSON-escaped': JSON.stringify(secret).slice(1, -1),
    'URL-encoded': encodeURIComponent(secret),
    'form-encoded': new URLSearchParams({ s: secret }).toString().slice(2),
  };
}

/** Every place (line number, secret name, form) where a secret shows in `lines`. */
export function leaks(lines: readonly string[], secrets: Record<string, string>): string[] {
  const found: string[] = [];
  lines.forEach((line, i) => {
    for (const [name, secret] of Object.entries(secrets)) {
      for (const [form, text] of Object.entries(writtenForms(secret))) {
        if (line.includes(text)) found.push(`line ${i}: ${name} (${form})`);
      }
      const marker = secret.match(/Q7[a-z]+/)?.[0];
      if (marker && line.includes(marker)) found.push(`line ${i}: ${name} (in part)`);
    }
  });
  return found;
}
