import type { Route } from './front-server.js';

/** What `/docs-agent status` reports about this instance, gathered as it runs. */
export interface Health {
  /** Called with every HTTP status the agent API answered. */
  agentAnswered(status: number): void;
  /** When the agent API last answered with success (epoch ms), if it has since start-up. */
  lastAgentSuccessAt(): number | undefined;
  setPollerRunning(running: boolean): void;
  pollerRunning(): boolean;
  startedAt: number;
}

export function createHealth(now: () => number = Date.now): Health {
  let lastSuccess: number | undefined;
  let polling = false;
  return {
    agentAnswered(status) {
      if (status >= 200 && status < 300) lastSuccess = now();
    },
    lastAgentSuccessAt: () => lastSuccess,
    setPollerRunning(running) {
      polling = running;
    },
    pollerRunning: () => polling,
    startedAt: now(),
  };
}

/** `/healthz`: 200 once the app is ready to serve, 503 before and while it stops. */
export function healthzRoute(isReady: () => boolean): Route {
  return {
    method: 'GET',
    path: '/healthz',
    handle: (_req, res) => {
      const ready = isReady();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: ready ? 'ok' : 'unavailable' }));
    },
  };
}
