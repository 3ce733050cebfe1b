import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config/config.js';
import { notifyChannelFor } from '../../src/config/notify-channels.js';
import { problemsOf, VALID_ENV } from '../helpers/config.js';

const valid = { ...VALID_ENV, CHANNEL_PROJECTS: 'C0API:api-docs,C0SDK:sdk-docs' };

describe('NOTIFY_CHANNEL_ID, NOTIFY_ON, NOTIFY_REQUESTER, NOTIFY_PRIVATE_JOBS', () => {
  it('default to no notification channel, pull requests only, the thread only, and private words kept', () => {
    const config = readConfig(valid);
    expect(config.notify.on).toBe('pr');
    expect(config.notify.requester).toBe('thread');
    expect(config.notify.privateJobs).toBe('outcome-only');
    expect(notifyChannelFor(config.notify.channels, 'proj_test')).toBeUndefined();
    expect(notifyChannelFor(config.notify.channels, 'api-docs')).toBeUndefined();
  });

  it('take one channel for every project', () => {
    const config = readConfig({
      ...valid,
      NOTIFY_CHANNEL_ID: ' C0NOTIFY ',
      NOTIFY_ON: 'ALL',
      NOTIFY_REQUESTER: 'dm',
      NOTIFY_PRIVATE_JOBS: ' Quote ',
    });
    expect(config.notify.on).toBe('all');
    expect(config.notify.requester).toBe('dm');
    expect(config.notify.privateJobs).toBe('quote');
    for (const project of ['proj_test', 'api-docs', 'sdk-docs'])
      expect(notifyChannelFor(config.notify.channels, project)).toBe('C0NOTIFY');
  });

  it('take channels per project, with or without one for the others', () => {
    const some = readConfig({ ...valid, NOTIFY_CHANNEL_ID: 'C0APINEWS:api-docs, G0SDKNEWS : sdk-docs' });
    expect(notifyChannelFor(some.notify.channels, 'api-docs')).toBe('C0APINEWS');
    expect(notifyChannelFor(some.notify.channels, 'sdk-docs')).toBe('G0SDKNEWS');
    expect(notifyChannelFor(some.notify.channels, 'proj_test')).toBeUndefined();
    const all = readConfig({ ...valid, NOTIFY_CHANNEL_ID: 'C0APINEWS:api-docs,C0NOTIFY' });
    expect(notifyChannelFor(all.notify.channels, 'api-docs')).toBe('C0APINEWS');
    expect(notifyChannelFor(all.notify.channels, 'sdk-docs')).toBe('C0NOTIFY');
  });

  it('name every malformed value at start-up', () => {
    const syntax =
      'NOTIFY_CHANNEL_ID must be a channel id (C0123ABCD) for every project, and/or channel:project pairs for single projects, comma-separated, such as C0123ABCD,C0456EFGH:sdk-docs';
    for (const bad of ['#docs', 'D0DIRECT', 'U0ALICE', 'api-docs:C0API', 'C0A:api-docs:x', 'C0A:', 'c0lower'])
      expect(problemsOf({ ...valid, NOTIFY_CHANNEL_ID: bad }), bad).toEqual([syntax]);
    expect(problemsOf({ ...valid, NOTIFY_CHANNEL_ID: 'C0ONE,C0TWO' })).toEqual([
      'NOTIFY_CHANNEL_ID names more than one channel for every project',
    ]);
    expect(problemsOf({ ...valid, NOTIFY_CHANNEL_ID: 'C0ONE:api-docs,C0TWO:api-docs' })).toEqual([
      'NOTIFY_CHANNEL_ID lists a project twice',
    ]);
    expect(
      problemsOf({ ...valid, NOTIFY_ON: 'some', NOTIFY_REQUESTER: 'email', NOTIFY_PRIVATE_JOBS: 'all' }),
    ).toEqual([
      'NOTIFY_ON must be pr or all',
      'NOTIFY_REQUESTER must be thread or dm',
      'NOTIFY_PRIVATE_JOBS must be outcome-only or quote',
    ]);
  });

  it('refuse a project no channel runs on (a typo would silence its notifications)', () => {
    expect(problemsOf({ ...valid, NOTIFY_CHANNEL_ID: 'C0NEWS:api-dcos' })).toEqual([
      'NOTIFY_CHANNEL_ID names project "api-dcos", which is neither DOCS_AGENT_PROJECT_ID nor a project of CHANNEL_PROJECTS',
    ]);
    expect(
      readConfig({ ...valid, NOTIFY_CHANNEL_ID: 'C0NEWS:proj_test' }).notify.channels.byProject.size,
    ).toBe(1);
  });
});
