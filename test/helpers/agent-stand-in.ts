import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { listen } from './http.js';

export const API_KEY = 'mint_test_key';
export const PROJECT_ID = 'proj_test';

/** The agent API's published OpenAPI document, kept in the repository (see test/contracts/README.md). */
export const OPENAPI_PATH = fileURLToPath(
  new URL('../contracts/mintlify-admin-openapi.json', import.meta.url),
);

type Json = Record<string, unknown>;

/** Compiles the OpenAPI document's schemas, so the stand-in speaks exactly the documented shapes. */
export function openApiValidators() {
  const doc = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as Json;
  // OpenAPI 3.0's `nullable` is not JSON Schema: turn it into a type union before compiling.
  const convert = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(convert);
    if (!node || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node as Json)) {
      if (k === 'nullable' || k === 'example') continue;
      out[k] = convert(v);
    }
    const n = node as Json;
    if (n.nullable === true && typeof n.type === 'string') {
      out.type = [n.type, 'null'];
      if (Array.isArray(n.enum)) out.enum = [...n.enum, null];
    }
    return out;
  };
  const components = convert((doc.components as Json).schemas) as Json;
  const ajv = new Ajv({ strict: false, allErrors: true });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => void;
  addFormats(ajv);
  for (const [name, schema] of Object.entries(components))
    ajv.addSchema(schema as Json, `#/components/schemas/${name}`);
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const requestSchema = (path: string, method: string) => {
    const operation = paths[path]?.[method];
    if (!operation) throw new Error(`the OpenAPI document has no ${method} ${path}`);
    const content = (operation.requestBody as Json).content as Json;
    return convert((content['application/json'] as Json).schema) as Json;
  };
  return {
    agentJob: ajv.getSchema('#/components/schemas/AgentJob') as ValidateFunction,
    error: ajv.getSchema('#/components/schemas/Error') as ValidateFunction,
    createBody: ajv.compile(requestSchema('/v2/agent/{projectId}/job', 'post')),
    messageBody: ajv.compile(requestSchema('/v2/agent/{projectId}/job/{id}/message', 'post')),
    doc,
  };
}

export type AgentOperation = 'create' | 'message' | 'get';

/** What a request answers instead of the documented default. */
export type AgentFault =
  | { status: number; body?: string; headers?: Record<string, string> }
  | { delayMs: number }
  /** Answers only once `until` settles: a call held in flight until the test lets it go. */
  | { held: Promise<unknown> }
  /** Answers with the state as it is now, but only after this delay (a stale answer). */
  | { staleAnswerMs: number }
  /** Closes the connection without an answer. */
  | { hangUp: true }
  /** Does the work, then closes the connection without an answer (the outcome is lost). */
  | { acceptThenHangUp: true }
  /**
   * Answers `status` (default 200) with a body of `bytes` bytes (a JSON string that never ends
   * soon), written `chunkBytes` at a time every `paceMs` (0: as fast as the socket takes it).
   * With `declareLength`, the Content-Length header announces the whole size. See `floods`.
   */
  | {
      flood: {
        status?: number;
        bytes: number;
        chunkBytes?: number;
        paceMs?: number;
        declareLength?: boolean;
        /** Sent first; the rest of the body is this character repeated. */
        prefix?: string;
        fill?: string;
      };
    };

/** What a flood answer got out before the caller hung up (or it ended). */
export interface FloodRecord {
  /** Bytes handed to the socket so far. */
  written: number;
  /** True once the caller closed the connection before the body was all written. */
  cutOff: boolean;
  /** True once the whole body was written. */
  finished: boolean;
}

export interface StandInJob {
  id: string;
  status: string;
  source: { repository: string; ref: string | null };
  model: string;
  prLink: string | null;
  /** The documentation project the job was created in. */
  projectId: string;
  createdAt: string;
  archivedAt: string | null;
  prompts: string[];
  /** Extra fields the API might add later; sent as-is. */
  extra?: Json;
  /** Deliberately outside the documented schema (a status the API may add later). */
  offSpec?: boolean;
  /** Polls since the current run started (scripted agent). */
  getsThisRun?: number;
}

/**
 * A loopback stand-in for the agent API that follows the OpenAPI document: it checks the
 * bearer key and request bodies against the documented schemas, answers 201 on create, and
 * validates every job it returns. Tests move jobs to terminal states and inject faults.
 */
export interface AgentHooks {
  /** Called as an accepted request arrives, before the stand-in's latency: when it reached the API. */
  arrived?(op: AgentOperation, body: Json | undefined): void;
  /** Called before an accepted request is processed; 'drop' closes the connection unprocessed. */
  before?(op: AgentOperation, body: Json | undefined): 'drop' | undefined;
  /** Called once the answer has been sent. */
  after?(op: AgentOperation, body: Json | undefined): void;
}

export interface AgentStandInOptions {
  hooks?: AgentHooks;
  /** Each run turns terminal on this many-th poll after it started (a scripted agent). */
  finishAfterGets?: number;
  /** The terminal state a scripted run ends in; by default completed with a pull request. */
  finishWith?: (job: StandInJob, run: number) => { status: string; prLink: string | null };
  /** How long every answer takes, in milliseconds (so overlapping polls of one job show). */
  latencyMs?: number;
  /** Documentation projects the key may use; default just PROJECT_ID. */
  projects?: string[];
  /** The admin key requests must carry; default {@link API_KEY}. */
  apiKey?: string;
}

export async function startAgentStandIn(options: AgentStandInOptions = {}) {
  const v = openApiValidators();
  const jobs = new Map<string, StandInJob>();
  const requests: { op: AgentOperation; projectId: string; jobId?: string; body?: Json; at: number }[] = [];
  const projects = new Set(options.projects ?? [PROJECT_ID]);
  const faults = new Map<AgentOperation, AgentFault[]>();
  const served: { op: AgentOperation; fault: AgentFault }[] = [];
  const violations: string[] = [];
  /** GETs of a job that arrived while another GET of the same job was still unanswered. */
  const overlappingGets: { jobId: string; at: number }[] = [];
  const floods: FloodRecord[] = [];
  const getsInFlight = new Map<string, number>();
  let counter = 0;

  const sendJson = (
    res: ServerResponse,
    status: number,
    body: Json,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const sendJob = (res: ServerResponse, status: number, job: StandInJob) => {
    const { prompts: _p, extra, offSpec, getsThisRun: _g, projectId: _project, ...wire } = job;
    if (!offSpec && !v.agentJob(wire))
      violations.push(`stand-in job breaks the schema: ${JSON.stringify(v.agentJob.errors)}`);
    sendJson(res, status, { ...wire, ...extra });
  };
  const sendError = (res: ServerResponse, status: number, message: string) =>
    sendJson(res, status, { error: message });

  /** Streams a long body, as a misbehaving API or proxy might, and records how much got out. */
  const flood = (res: ServerResponse, f: Extract<AgentFault, { flood: unknown }>['flood']) => {
    const record: FloodRecord = { written: 0, cutOff: false, finished: false };
    floods.push(record);
    res.writeHead(f.status ?? 200, {
      'content-type': 'application/json',
      ...(f.declareLength ? { 'content-length': String(f.bytes) } : {}),
    });
    res.on('close', () => {
      if (!record.finished) record.cutOff = true;
    });
    const prefix = Buffer.from(f.prefix ?? '{"id": "job_1", "status": "active", "model": "');
    const chunk = Buffer.alloc(f.chunkBytes ?? 16_384, f.fill ?? 'a');
    const write = (buffer: Buffer) => {
      record.written += buffer.length;
      return res.write(buffer);
    };
    write(prefix);
    const pump = () => {
      while (!record.cutOff && !res.destroyed) {
        const left = f.bytes - record.written;
        if (left <= 0) {
          record.finished = true;
          res.end();
          return;
        }
        const more = write(left < chunk.length ? chunk.subarray(0, left) : chunk);
        if (f.paceMs) {
          setTimeout(pump, f.paceMs);
          return;
        }
        if (!more) {
          res.once('drain', pump);
          return;
        }
      }
    };
    pump();
  };

  const stand = await listen(async (req, rawBody, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = url.pathname.match(/^\/v2\/agent\/([^/]+)\/job(?:\/([^/]+)(\/message)?)?$/);
    if (!match) {
      violations.push(`unexpected request ${req.method} ${url.pathname}`);
      return sendError(res, 404, 'Not found');
    }
    const [, projectId, jobId, message] = match;
    const op: AgentOperation | undefined =
      req.method === 'POST' && !jobId
        ? 'create'
        : req.method === 'POST' && message
          ? 'message'
          : req.method === 'GET' && jobId && !message
            ? 'get'
            : undefined;
    if (!op) {
      violations.push(`unexpected request ${req.method} ${url.pathname}`);
      return sendError(res, 405, 'Method not allowed');
    }
    if (req.headers.authorization !== `Bearer ${options.apiKey ?? API_KEY}`)
      return sendError(res, 401, 'Invalid API key');
    if (!projects.has(projectId as string)) return sendError(res, 404, 'Project not found');

    let body: Json | undefined;
    if (op !== 'get') {
      if (!String(req.headers['content-type']).includes('application/json'))
        violations.push(`${op} without JSON content type`);
      try {
        body = JSON.parse(rawBody) as Json;
      } catch {
        return sendError(res, 400, 'Body is not JSON');
      }
      const validate = op === 'create' ? v.createBody : v.messageBody;
      if (!validate(body))
        return sendError(res, 400, `Invalid request: ${validate.errors?.[0]?.message ?? 'bad body'}`);
    }
    requests.push({
      op,
      projectId: projectId as string,
      ...(jobId ? { jobId: decodeURIComponent(jobId) } : {}),
      ...(body ? { body } : {}),
      at: Date.now(),
    });
    options.hooks?.arrived?.(op, body);

    if (op === 'get') {
      const id = decodeURIComponent(jobId as string);
      const inFlight = getsInFlight.get(id) ?? 0;
      if (inFlight > 0) overlappingGets.push({ jobId: id, at: Date.now() });
      getsInFlight.set(id, inFlight + 1);
      // 'close' comes once the answer is sent or the caller hung up (a killed process).
      res.on('close', () => getsInFlight.set(id, (getsInFlight.get(id) ?? 1) - 1));
    }
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
    if (options.hooks?.before?.(op, body) === 'drop') {
      res.socket?.destroy();
      return;
    }
    if (options.hooks?.after) res.on('finish', () => options.hooks?.after?.(op, body));
    const fault = faults.get(op)?.shift();
    if (fault) served.push({ op, fault });
    if (fault && 'delayMs' in fault) await new Promise((r) => setTimeout(r, fault.delayMs));
    if (fault && 'held' in fault) await fault.held.catch(() => undefined);
    if (fault && 'hangUp' in fault) {
      res.socket?.destroy();
      return;
    }
    if (fault && 'flood' in fault) return flood(res, fault.flood);
    if (fault && 'status' in fault) {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      res.end(fault.body ?? JSON.stringify({ error: `Injected ${fault.status}` }));
      return;
    }

    let job: StandInJob | undefined;
    let status = 200;
    if (op === 'create') {
      counter += 1;
      job = {
        id: `job_${counter}`,
        status: 'active',
        source: { repository: 'https://github.com/example/docs', ref: `docs-agent/job-${counter}` },
        model: 'sonnet',
        prLink: null,
        projectId: projectId as string,
        createdAt: new Date().toISOString(),
        archivedAt: null,
        prompts: [String(body?.prompt)],
      };
      jobs.set(job.id, job);
      status = 201;
    } else {
      job = jobs.get(decodeURIComponent(jobId as string));
      // Jobs live in their project: another project's path does not find them.
      if (!job || job.projectId !== projectId) return sendError(res, 404, 'Job not found');
      if (op === 'message') {
        job.prompts.push(String(body?.prompt));
        job.status = 'active';
        job.prLink = null;
        job.getsThisRun = 0;
      }
      if (op === 'get' && options.finishAfterGets !== undefined && job.status === 'active') {
        job.getsThisRun = (job.getsThisRun ?? 0) + 1;
        if (job.getsThisRun >= options.finishAfterGets) {
          const end = options.finishWith?.(job, job.prompts.length) ?? {
            status: 'completed',
            prLink: `https://github.com/example/docs/pull/${job.id.replace(/\D/g, '')}`,
          };
          Object.assign(job, end);
        }
      }
    }
    if (fault && 'acceptThenHangUp' in fault) {
      res.socket?.destroy();
      return;
    }
    if (fault && 'staleAnswerMs' in fault) {
      const snapshot = structuredClone(job);
      await new Promise((r) => setTimeout(r, fault.staleAnswerMs));
      return sendJob(res, status, snapshot);
    }
    sendJob(res, status, job);
  });

  const mustGet = (id: string) => {
    const job = jobs.get(id);
    if (!job) throw new Error(`no job ${id}`);
    return job;
  };

  return {
    url: stand.url,
    jobs,
    requests,
    violations,
    overlappingGets,
    floods,
    requestsFor: (op: AgentOperation) => requests.filter((r) => r.op === op),
    /** Faults queued with {@link fail} that a request got, in order. */
    served,
    /** How many queued faults no request has got yet. */
    pendingFaults: () => [...faults.values()].reduce((n, queued) => n + queued.length, 0),
    fail(op: AgentOperation, ...queued: AgentFault[]) {
      faults.set(op, [...(faults.get(op) ?? []), ...queued]);
    },
    complete(id: string, prLink: string | null) {
      Object.assign(mustGet(id), { status: 'completed', prLink });
    },
    setStatus(id: string, status: string, extra?: Json) {
      const documented = ['active', 'completed', 'archived', 'failed'].includes(status);
      Object.assign(mustGet(id), { status, offSpec: !documented, ...(extra ? { extra } : {}) });
      if (status === 'archived') mustGet(id).archivedAt = new Date().toISOString();
    },
    remove(id: string) {
      jobs.delete(id);
    },
    close: stand.close,
  };
}

export type AgentStandIn = Awaited<ReturnType<typeof startAgentStandIn>>;
