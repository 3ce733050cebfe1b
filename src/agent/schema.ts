import { z } from 'zod';

/** The three agent API operations, as the client reports them (and as metric label values). */
export type AgentEndpoint = 'create_job' | 'send_message' | 'get_job';

/** How an agent API request ended: the HTTP status it answered, or no answer at all. */
export type AgentAnswer = number | 'timeout' | 'network_error';

/**
 * Instructions the agent API accepts per project per hour (its documented limit). Project quotas
 * default to it, and the status report counts against it.
 */
export const AGENT_HOURLY_LIMIT = 100;

/** Statuses the API documents. Anything else is kept as-is and treated as still running. */
export const TERMINAL_STATUSES = ['completed', 'archived', 'failed'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

/**
 * Longest values kept from an agent job, in characters. The documented values are far shorter
 * (an id, a status word, a repository URL, a branch name, a model name, a timestamp); the caps
 * only keep a misbehaving API from filling the store, a log line or a Slack message.
 */
export const AGENT_FIELD_LIMITS = {
  /** Longer, or with a control character, and the whole answer is invalid: ids go into URLs. */
  id: 256,
  /** Longer, and the status is kept as `unknown` (still running). */
  status: 64,
  /** Longer, and the field is dropped (null): a cut URL or name would be a wrong one. */
  repository: 1_000,
  ref: 256,
  model: 200,
  /**
   * Most characters of a pull request address kept. Any text is kept (up to this, then cut):
   * whether a pull request was opened must not depend on the address being well formed, and
   * the renderers show only checked addresses (https, at most 3,000 characters, a trusted host)
   * as links; the rest is shown as inert text.
   */
  prLink: 4_000,
  /** An ISO 8601 timestamp; longer, and it is dropped (null). */
  timestamp: 64,
} as const;

/** Longest explanation kept from an error answer (`{"error": string}`); longer ones are cut. */
export const MAX_ERROR_DETAIL_CHARS = 300;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * Whether a job id can go into a request path: 1 to 256 characters, no control character, and
 * not `.` or `..` (which URL parsing resolves as path segments even when percent-encoded).
 */
export function isSafeJobId(id: string): boolean {
  return id.length >= 1 && id.length <= AGENT_FIELD_LIMITS.id && !CONTROL.test(id) && !/^\.{1,2}$/.test(id);
}

/** An optional string field: null when missing, malformed or longer than `max`. */
const optionalString = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .catch(null)
    .transform((v) => v ?? null);

/**
 * AgentJob as documented in the OpenAPI document. No field is marked required there, so the
 * schema is tolerant: unknown fields are dropped, an unknown status is kept as a string, and a
 * malformed or overlong optional field becomes null rather than failing the whole record. Only
 * the id is strict: without a usable one the answer is invalid.
 */
export const agentJobSchema = z.object({
  id: z.string().refine(isSafeJobId, 'not a usable job id'),
  status: z.string().min(1).max(AGENT_FIELD_LIMITS.status).catch('unknown'),
  source: z
    .object({
      repository: optionalString(AGENT_FIELD_LIMITS.repository),
      ref: optionalString(AGENT_FIELD_LIMITS.ref),
    })
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
  model: optionalString(AGENT_FIELD_LIMITS.model),
  prLink: z
    .string()
    .nullish()
    .catch(null)
    .transform((v) => (v ? v.slice(0, AGENT_FIELD_LIMITS.prLink) : null)),
  createdAt: optionalString(AGENT_FIELD_LIMITS.timestamp),
  archivedAt: optionalString(AGENT_FIELD_LIMITS.timestamp),
});

export type AgentJob = z.infer<typeof agentJobSchema>;

/**
 * The job with `redact` applied to every field shown in Slack (status, source, model, pull
 * request address). The id is left as it is: it is only ever put into request paths.
 */
export function maskedJob(job: AgentJob, redact: (text: string) => string): AgentJob {
  const mask = (value: string | null) => (value === null ? null : redact(value));
  return {
    ...job,
    status: redact(job.status),
    source: job.source && { repository: mask(job.source.repository), ref: mask(job.source.ref) },
    model: mask(job.model),
    prLink: mask(job.prLink),
  };
}

/**
 * The error body the API documents: `{"error": string}`, the text cut to 1,000 characters. The
 * client masks secrets in what is left and then shows at most {@link MAX_ERROR_DETAIL_CHARS}
 * (masking first, so no cut leaves part of a secret unmasked).
 */
export const agentErrorSchema = z.object({
  error: z.string().transform((s) => s.slice(0, 1_000)),
});

export function isTerminal(status: string): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}
