import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { countInFlight, createFrontServer, type FrontServer } from '../../src/http/front-server.js';
import { createLogger } from '../../src/logging/logger.js';
import { createYieldGate } from '../../src/util/yield-gate.js';
import { waitFor } from '../helpers/http.js';

describe('requests counted for the yield gate', () => {
  let front: FrontServer | undefined;
  afterEach(async () => {
    await front?.stop();
    front = undefined;
  });

  it('counts a request as ended when its connection goes away, even one queued behind another', async () => {
    const gate = createYieldGate();
    const logger = createLogger({ level: 'error', secrets: [], write: () => undefined });
    // A handler still working on its answer when the client goes away.
    front = createFrontServer(
      [
        {
          method: 'POST',
          path: '/slack/events',
          handle: (req, res) => {
            countInFlight(gate, req, res);
            req.resume();
          },
        },
        {
          method: 'GET',
          path: '/healthz',
          handle: (req, res) => {
            countInFlight(gate, req, res);
            res.end('ok');
          },
        },
      ],
      logger,
    );
    const port = await front.listen(0);
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // A request still being answered, and a second one pipelined behind it (its answer queued).
    socket.write(
      'POST /slack/events HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nok' +
        'GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n',
    );
    await waitFor('both requests counted', () => gate.inFlight === 2, 2_000);
    socket.resetAndDestroy();
    await waitFor('the connection closed', () => socket.closed, 2_000);
    // Node never closes the queued request's response: counted as ended with its connection.
    await waitFor('no request left in flight', () => gate.inFlight === 0, 2_000).catch(() => undefined);
    expect(gate.inFlight).toBe(0);
  });
});
