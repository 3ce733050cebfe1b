import type { Route } from './front-server.js';

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
