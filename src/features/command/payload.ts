import type { SlackCommandMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { userIdSchema } from '../../slack/ids.js';

/** The slash command payload, parsed at the edge. */
export const commandSchema = z.object({
  text: z.string().default(''),
  user_id: userIdSchema,
  channel_id: z.string().min(1),
  team_id: z.string().min(1),
  team_domain: z.string().optional(),
  trigger_id: z.string().min(1),
  response_url: z.string().url().optional(),
  channel_name: z.string().optional(),
});
export type Command = z.infer<typeof commandSchema>;

export type Ack = SlackCommandMiddlewareArgs['ack'];
