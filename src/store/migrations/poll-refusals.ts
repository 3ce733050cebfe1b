/**
 * Version 13: refused polls counted apart from other failed ones.
 *
 * poll_refusals: consecutive polls the agent API refused with the admin key (401/403). The thread
 * is told of a refused key after a few of these in a row; poll_failures counts every failed poll
 * (a 503, a network error), so it cannot say how many refusals came in a row. Any poll that is
 * not refused (answered or failed otherwise) sets it back to 0.
 */
export const POLL_REFUSALS_MIGRATION = {
  version: 13,
  name: 'refused polls counted apart',
  sql: `
      ALTER TABLE jobs ADD COLUMN poll_refusals INTEGER NOT NULL DEFAULT 0;
    `,
} as const;
