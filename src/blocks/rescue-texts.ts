import { channelMention, codeSpan, md } from '../slack/mrkdwn.js';

/** The first line of a thread post sent directly to the requester because its thread is gone. */
export const rescueIntro = (channel: string, code: string) =>
  md`:information_source: I could not post in the job's thread in ${channelMention(channel)} (Slack said ${codeSpan(code)}), so here it is directly:`;
