import { it } from 'vitest';
import { pollerScale } from './poller-scale.js';

it('poller scale', async () => {
  const r = await pollerScale({
    jobs: 10_000,
    channels: 20,
    budget: 400,
    pollIntervalMs: 10_000,
    finishing: 0.1,
    windowMs: 30_000,
    latencyMs: 0,
  });
  console.log(JSON.stringify(r, null, 1));
});
