/** What every button click (a `block_actions` payload) says alike, read once for every listener. */

import { z } from 'zod';
import { userIdSchema } from './ids.js';

/**
 * Who clicked, where, and where to answer them: the part of a `block_actions` payload every
 * button's listener reads the same way. Each listener extends it with its own `actions`.
 */
export const clickSchema = z.object({
  // `null` in an organisation-wide install, where the person's workspace is `user.team_id`.
  team: z
    .object({ id: z.string().min(1) })
    .nullable()
    .optional(),
  user: z.object({ id: userIdSchema, team_id: z.string().min(1).optional() }),
  channel: z.object({ id: z.string().min(1) }),
  // Private answers to the person who clicked, for 30 minutes.
  response_url: z.string().url().optional(),
});

export type Click = z.infer<typeof clickSchema>;

/**
 * The workspace of the person who clicked: their own (`user.team_id`, which an Enterprise Grid
 * payload carries while `team` is null), else the payload's; undefined when Slack said neither.
 */
export const clickersTeam = (click: Pick<Click, 'team' | 'user'>): string | undefined =>
  click.user.team_id ?? click.team?.id;
