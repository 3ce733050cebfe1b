import { z } from 'zod';
import { SlackCallError } from '../../slack/caller.js';
import { type Mrkdwn, recordedMrkdwn } from '../../slack/mrkdwn.js';
import type { NewOutboxItem, OutboxItem } from '../../store/types.js';
import { outboxKind } from '../outbox-kind.js';

/** A reply to a slash command through its `response_url`, seen only by the person who ran it. */
const respondPayload = z.looseObject({
  type: z.literal('respond'),
  responseUrl: z.string(),
  text: z.string(),
  /** Where to say it instead once the response_url has expired. */
  fallback: z.looseObject({ channel: z.string(), user: z.string() }).optional(),
});

/** A message only `user` sees, in the channel (and the thread, when there is one). */
const ephemeralPayload = z.looseObject({
  type: z.literal('ephemeral'),
  channel: z.string(),
  user: z.string(),
  threadTs: z.string().nullable(),
  text: z.string(),
});

type PrivateNotePayload = z.infer<typeof respondPayload> | z.infer<typeof ephemeralPayload>;

/** Where to tell one person something privately. */
export interface PrivateTarget {
  channelId: string;
  userId: string;
  threadTs: string | null;
  /** A slash command's response_url, preferred while it is valid. */
  responseUrl: string | null;
}

/** A private note to one person; `dedupeKey`, one of this kind's items. */
export function privateNote(
  jobId: number | null,
  dedupeKey: string,
  to: PrivateTarget,
  text: Mrkdwn,
): NewOutboxItem<PrivateNotePayload> {
  return {
    jobId,
    dedupeKey,
    payload: to.responseUrl
      ? {
          type: 'respond',
          responseUrl: to.responseUrl,
          text,
          fallback: { channel: to.channelId, user: to.userId },
        }
      : { type: 'ephemeral', channel: to.channelId, user: to.userId, threadTs: to.threadTs, text },
  };
}

type JobKey = { jobId: number };
type RunKey = { runId: number };

/**
 * What the bot tells one person privately (a refusal, a notice about their own message): no
 * metadata, since nothing can be read back from a private note.
 */
export const privateNotes = outboxKind({
  payloads: [respondPayload, ephemeralPayload],
  items: {
    /** A stop pressed by someone who may not stop the job, told once per press. */
    stopRefused: ({ jobId, eventTs }: JobKey & { eventTs: string }) => `stop-refused:${eventTs}:${jobId}`,
    /** The root message could not be posted: the job was not started. */
    startRefused: ({ jobId }: JobKey) => `start-refused:${jobId}`,
    /** The first instruction was refused (length, access, hourly limits). */
    refused: ({ jobId }: JobKey) => `refused:${jobId}`,
    /** A restart came while the root message was being posted: nothing was started. */
    restartRefused: ({ jobId }: JobKey) => `restart-refused:${jobId}`,
    /** A follow-up refused or not sent, told to its author. */
    dropped: ({ runId }: RunKey) => `dropped:${runId}`,
    /** An instruction held until Slack confirms its author, told once per instruction. */
    held: ({ kind, id }: { kind: 'job' | 'reply'; id: number }) => `held:${kind}:${id}`,
    /** An edit (one version of a message) that came after the agent had the text. */
    editedLate: ({ runId, version }: RunKey & { version: string }) => `edited-late:${runId}:${version}`,
    /** A deletion that came after the agent had the text. */
    deletedLate: ({ runId }: RunKey) => `deleted-late:${runId}`,
    /** An edit of a waiting instruction that was not taken (too long), once per message version. */
    editRefused: ({ runId, version }: RunKey & { version: string }) => `edit-refused:${runId}:${version}`,
    /** A waiting reply edited into an aside (or nothing): taken out of its batch. */
    withdrawn: ({ runId }: RunKey) => `withdrawn:${runId}`,
    /** Files shared with an instruction do not reach the agent: told once per message. */
    filesUnseen: ({ channelId, messageTs }: { channelId: string; messageTs: string }) =>
      `files:${channelId}:${messageTs}`,
  },
  sender: ({ slack }) => ({
    async send({ payload }: OutboxItem<PrivateNotePayload>): Promise<undefined> {
      if (payload.type === 'ephemeral') {
        await slack.postEphemeral({
          channel: payload.channel,
          user: payload.user,
          text: recordedMrkdwn(payload.text),
          ...(payload.threadTs ? { threadTs: payload.threadTs } : {}),
        });
        return;
      }
      try {
        await slack.respond(payload.responseUrl, recordedMrkdwn(payload.text));
      } catch (error) {
        // A response_url lives 30 minutes; after that, say it privately in the channel.
        if (!(error instanceof SlackCallError && error.code === 'expired_url' && payload.fallback))
          throw error;
        await slack.postEphemeral({
          channel: payload.fallback.channel,
          user: payload.fallback.user,
          text: recordedMrkdwn(payload.text),
        });
      }
    },
  }),
});
