import { it } from 'vitest';
import { ackPath } from './ack-path.js';

it('ack path', async () => {
  const r = await ackPath({ commands: 3000, concurrency: 50, warmup: 300, latencyMs: 0 });
  console.log(JSON.stringify(r, null, 1));
});
