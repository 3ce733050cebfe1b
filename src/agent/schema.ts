import { z } from 'zod';

/** Statuses the API documents. Anything else is kept as-is and treated as still running. */
export const TERMINAL_STATUSES = ['completed', 'archived', 'failed'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

const nullableString = z
  .string()
  .nullish()
  .transform((v) => v ?? null);

/**
 * AgentJob as documented in the OpenAPI document. No field is marked required there, so the
 * schema is tolerant: unknown fields are dropped, an unknown status is kept as a string, and a
 * malformed optional field becomes null rather than failing the whole record.
 */
export const agentJobSchema = z.object({
  id: z.string().min(1),
  status: z.string().min(1).catch('unknown'),
  source: z
    .object({ repository: nullableString, ref: nullableString })
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
  model: nullableString.catch(null),
  prLink: z
    .url({ protocol: /^https?$/ })
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
  createdAt: nullableString.catch(null),
  archivedAt: nullableString.catch(null),
});

export type AgentJob = z.infer<typeof agentJobSchema>;

/** The error body the API documents: `{"error": string}`. */
export const agentErrorSchema = z.object({ error: z.string() });

export function isTerminal(status: string): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}
