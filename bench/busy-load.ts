import { messageEvent, slashCommand } from '../test/helpers/payloads.js';
import { postSigned } from '../test/helpers/signing.js';
import type { SlackStandIn } from '../test/helpers/slack-stand-in.js';
import { busyChannel, busyPerson, commandText, followUpText } from './busy-world.js';
import { preciseNow } from './stats.js';

/** A request sent to docs-agent: when, and how it was answered (0: no answer). */
export interface Sent {
  at: number;
  status: number;
}

/** How long after its card a follow-up is written: a person reads the card first. */
export const FOLLOW_UP_AFTER_MS = 2_000;

export interface BusyLoad {
  /** Each command, by its index. */
  commands: Map<number, Sent>;
  /** Each follow-up, by its command's index. */
  followUps: Map<number, Sent>;
  /** Follow-ups due (their card is posted) but not yet answered. */
  pendingFollowUps(): number;
  /** Writes command `k`'s follow-up in its card's thread, if it is to have one. */
  cardPosted(k: number, card: { channel: string; ts: string }): void;
  /** Sends the commands on their schedule; resolves once the last was answered. */
  run(): Promise<void>;
}

/**
 * The busy workspace's people: `/docs-agent` commands, correctly signed, at `perMinute` a minute
 * for `minutes` on a fixed schedule (an open loop: a slow answer does not hold the next command
 * back), from 50 people in 40 channels; and for every other command, a person's reply in its
 * thread, sent as a signed Events API `message` event once its card is posted. Requests go to
 * the instances in turn, as a load balancer would.
 */
export function busyLoad(options: {
  bases: string[];
  slack: SlackStandIn;
  perMinute: number;
  minutes: number;
}): BusyLoad {
  const commands = new Map<number, Sent>();
  const followUps = new Map<number, Sent>();
  let pending = 0;
  let turn = 0;
  let replies = 0;
  const nextBase = () => options.bases[turn++ % options.bases.length] as string;
  const answered = (sent: Promise<Response>) =>
    sent.then(
      async (res) => {
        await res.arrayBuffer();
        return res.status;
      },
      () => 0,
    );

  const sendFollowUp = async (k: number, card: { channel: string; ts: string }) => {
    // After every ts Slack gave out in this run, as a later message's would be.
    const ts = `${Math.floor(Date.now() / 1000)}.${String(900_000 + ++replies)}`;
    const reply = {
      channel: card.channel,
      user: busyPerson(k + 1),
      text: followUpText(k),
      thread_ts: card.ts,
    };
    options.slack.humans.push({ ...reply, ts });
    const at = preciseNow();
    const body = messageEvent({ ...reply, ts });
    followUps.set(k, {
      at,
      status: await answered(postSigned(nextBase(), body, { contentType: 'application/json' })),
    });
    pending -= 1;
  };

  return {
    commands,
    followUps,
    pendingFollowUps: () => pending,
    cardPosted(k, card) {
      if (k % 2 !== 0) return;
      pending += 1;
      setTimeout(() => void sendFollowUp(k, card), FOLLOW_UP_AFTER_MS);
    },
    async run() {
      const count = Math.round(options.perMinute * options.minutes);
      const start = preciseNow();
      const sends: Promise<void>[] = [];
      for (let k = 0; k < count; k++) {
        const due = start + (k * 60_000) / options.perMinute;
        const wait = due - preciseNow();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const body = slashCommand({
          text: commandText(k),
          channel_id: busyChannel(k),
          channel_name: 'busy',
          user_id: busyPerson(k),
          response_url: options.slack.responseUrl(`busy-${k}`),
        });
        const at = preciseNow();
        sends.push(
          answered(postSigned(nextBase(), body)).then((status) => {
            commands.set(k, { at, status });
          }),
        );
      }
      await Promise.all(sends);
    },
  };
}
