/**
 * Version 10: how long an owner's hold on half-done work lasts, timed by the database's clock.
 *
 * owner_until: until when (the store's clock, epoch ms) the owner of a job being started or of a
 * follow-up being sent may be inside a call to the agent API for it. Set right before such a call
 * (and renewed by the owner), never by another instance. Work is taken over only once its owner
 * has stopped heartbeating and this time has passed, so a take-over never overlaps a call its
 * owner started while it held the work. Null: no call is under way.
 */
export const HOLDS_MIGRATION = {
  version: 10,
  name: 'holds on half-done work timed by the database',
  sql: `
      ALTER TABLE jobs ADD COLUMN owner_until {{time}};
      ALTER TABLE runs ADD COLUMN owner_until {{time}};
    `,
} as const;
