/** What a Slack id is, read from its form: the one home of these rules. */

import { z } from 'zod';

/** Slack ids are upper-case letters and digits; anything else is shown, never parsed. */
export const SLACK_ID = /^[A-Z0-9]{2,40}$/;

/**
 * A person's id: `U…`, or `W…` for an Enterprise Grid account (what Slack gives a person of an
 * organisation in every workspace of it). An app's own name, which may be any text, is none.
 */
export const isUserId = (id: string): boolean => SLACK_ID.test(id) && /^[UW]/.test(id);

/** A workspace's id: `T…`. */
export const isTeamId = (id: string): boolean => SLACK_ID.test(id) && id.startsWith('T');

/** An Enterprise Grid organisation's id: `E…`. */
export const isEnterpriseId = (id: string): boolean => SLACK_ID.test(id) && id.startsWith('E');

/**
 * A person's id in a payload, for the listeners' schemas: anything else fails the parse (and is
 * logged by its field name), so it is never looked up, addressed (`chat.postEphemeral`,
 * `views.publish`) or written back into a message as a mention.
 */
export const userIdSchema = z.string().refine(isUserId, { message: 'not a user id' });
