import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../logging/logger.js';
import type { YieldGate } from '../util/yield-gate.js';

/** One thing the app serves over HTTP: a method and an exact path. */
export interface Route {
  method: 'GET' | 'POST';
  path: string;
  /** May throw or reject: the server answers 500 and keeps serving. */
  handle(req: IncomingMessage, res: ServerResponse): void | Promise<void>;
}

/** How long requests in flight may take to be answered once the server stops, in milliseconds. */
export const STOP_GRACE_MS = 3_000;
/** Longest a client may take to send one request, in milliseconds. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How much of an unknown path a debug line keeps: the path is whatever a stranger sent. */
const LOGGED_PATH_CHARS = 120;

export interface FrontServer {
  /** Starts listening; resolves with the port actually bound. */
  listen(port: number): Promise<number>;
  /** Stops taking connections and lets requests in flight finish (bounded by STOP_GRACE_MS). */
  stop(): Promise<void>;
  server: Server;
}

/**
 * The app's only HTTP server, in both HTTP and Socket Mode. It routes by exact path and method
 * and answers everything else itself: 404 for a path it does not serve, 405 (with `Allow`) for a
 * wrong method. Nothing a request carries can throw out of the server callback, because such a
 * throw ends the process: the URL is never parsed with a constructor that throws, and a handler
 * that throws or rejects gets a 500 while the server keeps serving.
 */
export function createFrontServer(routes: readonly Route[], logger: Logger): FrontServer {
  let stopping = false;
  /** Answers not yet begun: told to close their connection too if the server starts stopping. */
  const unanswered = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    // While stopping, requests already on a kept-alive connection are still answered, but the
    // connection closes after each, so clients (and Slack) go to another instance.
    if (stopping) res.setHeader('connection', 'close');
    else {
      unanswered.add(res);
      res.once('close', () => unanswered.delete(res));
    }
    const path = pathOf(req.url);
    const method = (req.method ?? '').toUpperCase();
    const onPath = routes.filter((r) => r.path === path);
    const route = onPath.find((r) => r.method === method || (method === 'HEAD' && r.method === 'GET'));
    if (!route) {
      logger.debug('request the app does not serve', {
        method: method.slice(0, 16),
        path: path.slice(0, LOGGED_PATH_CHARS),
      });
      if (onPath.length === 0) return answerPlain(req, res, 404, 'not found');
      res.setHeader('allow', [...new Set(onPath.map((r) => r.method))].join(', '));
      return answerPlain(req, res, 405, 'method not allowed');
    }
    const failed = (error: unknown) => {
      logger.error('an HTTP handler failed', { error, path: route.path });
      if (!res.headersSent) answerPlain(req, res, 500, 'internal error');
      else res.destroy();
    };
    try {
      const done = route.handle(req, res);
      if (done) done.catch(failed);
    } catch (error) {
      failed(error);
    }
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  // A socket error after the server is up (a client resetting mid-request) is the client's
  // problem, never a reason to stop: without a listener the 'error' event would throw.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });

  return {
    server,
    listen: (port) =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, () => {
          server.off('error', reject);
          server.on('error', (error) => logger.error('the HTTP server reported an error', { error }));
          resolve((server.address() as AddressInfo).port);
        });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        stopping = true;
        // A request in flight now would otherwise leave its connection open, and the stop
        // would wait out the whole grace for it.
        for (const res of unanswered) if (!res.headersSent) res.setHeader('connection', 'close');
        unanswered.clear();
        const force = setTimeout(() => server.closeAllConnections(), STOP_GRACE_MS);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

/** Each connection's requests in flight, ended together if the connection goes away first. */
const inFlightOn = new WeakMap<Socket, Set<() => void>>();

/**
 * Tells `gate` of `req` now and once more when it has ended: its response closed (answered, or
 * the client went away) or its connection did. Node never closes the response of a request
 * pipelined behind another on a connection that goes away, and a count that never came down
 * would keep background work in its slowest mode for good. A route calls it for the requests
 * that may hold background work back (Slack's, once their signature checked out).
 */
export function countInFlight(gate: YieldGate, req: IncomingMessage, res: ServerResponse): void {
  gate.requestStarted();
  const socket = req.socket;
  let requests = inFlightOn.get(socket);
  if (!requests) {
    const onSocket = new Set<() => void>();
    inFlightOn.set(socket, onSocket);
    socket.once('close', () => {
      for (const end of [...onSocket]) end();
    });
    requests = onSocket;
  }
  const pending = requests;
  const end = () => {
    if (!pending.delete(end)) return;
    gate.requestEnded();
  };
  pending.add(end);
  res.once('close', end);
}

/** The path of a request target, without its query; never throws (unlike `new URL`). */
export function pathOf(url: string | undefined): string {
  const target = url ?? '';
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

/** A short plain-text answer; the rest of the request body is read and dropped. */
export function answerPlain(req: IncomingMessage, res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
  req.resume();
}
