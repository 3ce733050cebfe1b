import { describe, expect, it } from 'vitest';
import {
  cardText,
  duration,
  followUpHint,
  outcomeText,
  pullRequestLink,
  quoteInstruction,
  statusLine,
  text,
} from '../../src/blocks/messages.js';
import { JOB_PHASES } from '../../src/domain/phases.js';
import { md } from '../../src/slack/mrkdwn.js';
import type { RunOutcome } from '../../src/store/types.js';
import { jobRecord } from '../helpers/job-record.js';
import { HINTS, RUN_OUTCOMES } from '../helpers/rendering.js';

const PR = 'https://github.com/acme/docs/pull/7';
const DAY = 86_400_000;

/** Entities Slack would act on: a mention, a broadcast, a link. */
const ENTITY = /<[@!#h]/;

describe('followUpHint', () => {
  it('says how to send a follow-up in each mode, and how to keep a reply from the agent', () => {
    expect(followUpHint(HINTS)).toBe(
      'Reply in this thread to send the agent a follow-up. Start a reply with `//` to keep it from the agent.',
    );
    expect(followUpHint({ ...HINTS, mode: 'mention', asideMarker: '' }, md`the thread`)).toBe(
      'Mention @docs-agent in the thread to send the agent a follow-up.',
    );
  });

  it('shows a configured marker inert', () => {
    expect(followUpHint({ ...HINTS, asideMarker: '<!here>`' })).toContain("`&lt;!here&gt;'`");
  });
});

describe('duration', () => {
  it('rounds to whole seconds, minutes from two minutes, hours from two hours, singular for one', () => {
    expect(duration(0)).toBe('1 second');
    expect(duration(1_400)).toBe('1 second');
    expect(duration(30_000)).toBe('30 seconds');
    expect(duration(119_000)).toBe('119 seconds');
    expect(duration(120_000)).toBe('2 minutes');
    expect(duration(45 * 60_000)).toBe('45 minutes');
    expect(duration(2 * 3_600_000 - 1)).toBe('120 minutes');
    expect(duration(2 * 3_600_000)).toBe('2 hours');
    expect(duration(DAY)).toBe('24 hours');
  });
});

describe('quoteInstruction', () => {
  it('quotes every line, with mentions and links made readable and inert', () => {
    expect(quoteInstruction('Ask <!here> and <@U0BOB|bob>\nsee <https://phish.example|docs> & more')).toBe(
      '>Ask @here and @bob\n>see docs (https://phish.example) &amp; more',
    );
  });

  it('shortens to the limit without breaking an escape', () => {
    const quoted = quoteInstruction(`${'a'.repeat(8)}&&&&`, 12);
    expect(quoted).toBe('>aaaaaaaa…');
    expect(quoteInstruction('x'.repeat(5_000)).length).toBeLessThanOrEqual(2_001);
  });
});

describe('pullRequestLink', () => {
  it('links a pull request on a trusted host, with the label', () => {
    expect(pullRequestLink(PR, HINTS, 'pull request')).toBe(`<${PR}|pull request>`);
  });

  it('shows any other address as inert text in a code span, shortened', () => {
    expect(pullRequestLink('https://evilgithub.com/acme/docs/pull/7', HINTS, 'pull request')).toBe(
      'pull request at `https://evilgithub.com/acme/docs/pull/7`',
    );
    expect(pullRequestLink(`${PR}|<!channel>`, HINTS, 'pull request')).toBe(
      `pull request at \`${PR}|&lt;!channel&gt;\``,
    );
    const long = pullRequestLink(`https://x.example/${'p'.repeat(500)}`, HINTS, 'pr');
    expect(long.length).toBeLessThan(220);
    expect(pullRequestLink(null, HINTS, 'a <b>')).toBe('a &lt;b&gt;');
  });
});

describe('statusLine', () => {
  const line = (fields: Parameters<typeof jobRecord>[0]) => statusLine(jobRecord(fields), HINTS);

  it('says where each phase stands', () => {
    for (const phase of ['accepted', 'posting', 'creating'] as const) {
      expect(line({ phase })).toBe(':hourglass_flowing_sand: Starting…');
    }
    expect(line({ phase: 'active', runCount: 1 })).toBe(':hourglass_flowing_sand: Working…');
    expect(line({ phase: 'active', runCount: 3 })).toBe(':hourglass_flowing_sand: Working (run 3)…');
    expect(line({ phase: 'not_started' })).toBe(':no_entry: Not started');
    expect(line({ phase: 'start_unknown' })).toBe(':grey_question: Unknown whether the job started');
    expect(line({ phase: 'gone' })).toBe(':ghost: The agent API no longer knows this job');
    expect(line({ phase: 'retried' })).toBe(':repeat: Retried as a new job');
  });

  it('says how the latest run ended once the job is idle', () => {
    const idle = (lastOutcome: RunOutcome | null, prLink: string | null = null) =>
      line({ phase: 'idle', lastOutcome, prLink });
    expect(idle('completed_pr', PR)).toBe(`:white_check_mark: Done: <${PR}|pull request>`);
    expect(idle('completed_pr')).toBe(':white_check_mark: Done');
    expect(idle('completed_no_changes')).toBe(':white_check_mark: Done: no files changed');
    expect(idle('failed')).toBe(':x: Failed');
    expect(idle('archived')).toBe(':file_cabinet: Archived');
    expect(idle('gone')).toBe(':ghost: The agent API no longer knows this job');
    expect(idle('stopped_watching')).toBe(':zzz: Stopped watching (still running after the time limit)');
    expect(idle(null)).toBe(':white_check_mark: Done');
  });

  it('has words for every phase', () => {
    for (const phase of JOB_PHASES) expect(line({ phase }).length).toBeGreaterThan(0);
  });
});

describe('cardText', () => {
  it('names who asked, quotes what, and says the status, the job and how to follow up', () => {
    expect(cardText(jobRecord({ instruction: 'Add a <!channel> quickstart' }), HINTS)).toBe(
      [
        ':memo: <@U0ALICE> asked the docs agent:',
        '>Add a @channel quickstart',
        '*Status:* :hourglass_flowing_sand: Working…',
        'Job `job_1`',
        '_Reply in this thread to send the agent a follow-up. Start a reply with `//` to keep it from the agent._',
      ].join('\n'),
    );
  });

  it('offers no follow-up for a job that takes none, and no job id before there is one', () => {
    const card = cardText(jobRecord({ phase: 'not_started', agentJobId: null }), HINTS);
    expect(card).not.toContain('follow-up');
    expect(card).not.toContain('Job `');
  });
});

describe('outcomeText', () => {
  const outcome = (o: RunOutcome, fields: Parameters<typeof jobRecord>[0] = {}, notify = ['U0ALICE']) =>
    outcomeText(o, jobRecord({ phase: 'idle', lastOutcome: o, ...fields }), notify, DAY, HINTS);

  it('links a trusted pull request, and mentions the people to notify', () => {
    expect(outcome('completed_pr', { prLink: PR }, ['U0ALICE', 'U0BOB'])).toBe(
      `<@U0ALICE> <@U0BOB> :white_check_mark: The docs agent finished and opened a pull request:\n*<${PR}|Review the pull request>*\n${PR}`,
    );
  });

  it('starts with the outcome when nobody is to be notified', () => {
    for (const o of RUN_OUTCOMES) {
      expect(outcome(o, { prLink: PR }, []), o).toMatch(/^:[a-z_]+: /);
    }
  });

  it('warns about an untrusted pull request address and does not link it', () => {
    const said = outcome('completed_pr', { prLink: 'https://phish.example/acme/docs/pull/7' });
    expect(said).toContain('at `https://phish.example/acme/docs/pull/7`');
    expect(said).toContain('check it before you open it');
    expect(said).not.toContain('<https://phish');
    expect(outcome('completed_pr')).toBe(
      '<@U0ALICE> :white_check_mark: The docs agent finished and opened a pull request.',
    );
  });

  it('says what each other outcome means and what to do next', () => {
    expect(outcome('completed_no_changes')).toContain(
      'without changing any files, so no pull request was opened',
    );
    expect(outcome('failed')).toContain('quote job `job_1` if you contact support');
    expect(outcome('failed')).toContain('press *Try again*');
    expect(outcome('archived')).toContain('job `job_1` was archived');
    expect(outcome('gone')).toContain('no longer knows job `job_1` (it answered 404)');
    expect(outcome('gone', { agentJobId: null })).toContain('no longer knows job unknown');
  });

  it('tells apart a job still running at the limit from one that could not be checked', () => {
    expect(outcome('stopped_watching')).toBe(
      '<@U0ALICE> :zzz: Job `job_1` is still running after 24 hours, so I have stopped watching it. Check the docs dashboard for its result.',
    );
    expect(outcome('stopped_watching', { pollFailures: 3 })).toContain(
      'I could not check on job `job_1` for a while (the agent API did not answer me), and after 24 hours',
    );
  });

  it('mentions only people: a hostile id or job id stays inert', () => {
    const said = outcome('failed', { agentJobId: '`<!channel>' }, ['<!here>', 'U0BOB']);
    expect(said.startsWith('&lt;!here&gt; <@U0BOB> :x:')).toBe(true);
    expect(said).toContain("job `'&lt;!channel&gt;`");
    expect(said).not.toMatch(/<!/);
  });
});

describe('text', () => {
  it('says in every note without arguments what did not happen, mentioning nobody', () => {
    const said: Record<string, string> = {
      notRecorded: 'nothing was started',
      restartedBeforePost: 'nothing was started',
      followUpJobGone: 'your reply was not sent',
      emptyFollowUp: 'nothing was sent to the agent',
      awaitingVerification: 'has not been sent to the agent yet',
      verificationTimedOut: 'was not sent to the agent',
    };
    for (const [name, words] of Object.entries(said)) {
      const note = (text[name as keyof typeof text] as () => string)();
      expect(note, name).toContain(words);
      expect(note, name).not.toMatch(ENTITY);
    }
  });

  it('gives lengths with thousands separators', () => {
    expect(text.promptTooLong(12_345, 10_000)).toContain('is 12,345 characters long; the limit is 10,000');
  });

  it('tells apart a conversation the bot cannot be invited to from a channel it can', () => {
    expect(text.notInChannel('C0DOCS')).toContain("I can't post in <#C0DOCS>, so no job was started.");
    for (const id of ['D0DM', 'G0GROUP']) {
      expect(text.notInChannel(id)).toContain("I can't post in this conversation");
      expect(text.notInChannel(id)).not.toContain(id);
    }
  });

  it("shows Slack's reason inert and short", () => {
    const said = text.cannotPost(`<@U0EVE>${'r'.repeat(300)}`);
    expect(said).toContain('(Slack said `&lt;@U0EVE&gt;');
    expect(said.length).toBeLessThan(220);
  });

  it('says why a follow-up was not sent, by what became of the job', () => {
    expect(text.followUpNoJob('not_started')).toContain('(it was never started)');
    expect(text.followUpNoJob('start_unknown')).toContain('(it is not known whether it started)');
    expect(text.followUpRestarted('U0BOB').startsWith('<@U0BOB> :grey_question:')).toBe(true);
    expect(text.pollRefused('U0ALICE')).toContain("refuses this bot's API key");
    expect(text.restartedBeforeCreate('U0ALICE')).toContain('I will not resend it');
  });
});

describe('text.filesUnseen', () => {
  const file = (name: string, type = 'png') => ({ name, type });

  it('lists the unseen files by name in code spans', () => {
    expect(text.filesUnseen([file('spec.pdf', 'pdf'), file('diagram.png')])).toBe(
      ':paperclip: Files do not reach the docs agent: it gets only their names and types (`spec.pdf`, `diagram.png`), with your text. Paste what it needs from them into your message.',
    );
  });

  it('names five files and counts the rest', () => {
    const files = Array.from({ length: 8 }, (_, i) => file(`f${i}.txt`));
    const note = text.filesUnseen(files);
    expect(note).toContain('(`f0.txt`, `f1.txt`, `f2.txt`, `f3.txt`, `f4.txt`, 3 more)');
    expect(note).not.toContain('f5.txt');
    expect(text.filesUnseen(files.slice(0, 5))).not.toContain('more');
  });

  it('shows hostile file names inert: no mention, no broadcast, no closing the code span', () => {
    const note = text.filesUnseen([
      file('<!channel> & <@U0EVE>.png'),
      file('a`b`<https://phish.example|report>.pdf'),
      file('two\nlines.txt'),
    ]);
    expect(note).toContain('`&lt;!channel&gt; &amp; &lt;@U0EVE&gt;.png`');
    expect(note).toContain("`a'b'&lt;https://phish.example|report&gt;.pdf`");
    expect(note).toContain('`two lines.txt`');
    expect(note).not.toMatch(/<[!@#h]/);
  });

  it('shortens a long file name to 80 characters', () => {
    const note = text.filesUnseen([file(`${'n'.repeat(200)}.pdf`)]);
    const [, name] = /\(`([^`]*)`\)/.exec(note) ?? [];
    expect(name).toHaveLength(80);
    expect(name?.endsWith('…')).toBe(true);
  });
});
