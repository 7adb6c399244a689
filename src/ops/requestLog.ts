import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger, RequestLineWriter } from './logger';
import type { Metrics } from './metrics';
import { type RequestTrace, type TracedRequest, type Tracing, withinSpan } from './tracing';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's X-Request-Id when it is a plain token of at most 128 characters; otherwise a new one. */
const requestIdOf = (given: string | string[] | undefined): string =>
  typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();

export interface RequestLogDeps {
  logger: Logger;
  requestLine: RequestLineWriter;
  metrics: Metrics;
  /** The operations whose calls are also counted by client (the deprecated ones). */
  countedByClient: ReadonlySet<string>;
  /** Tracing on: each request's server span, its ids on the request's log line. */
  tracing?: Tracing;
}

/**
 * What a request's answering learned that its log line, metrics and span report: given by the
 * door that answered it when the request is done (express's on `res.locals`).
 */
export interface RequestFacts {
  /** The operation the request matched. */
  operationId?: string;
  /** The route template it matched (`/v1/pets/{petId}`), also for a 405. */
  route?: string;
  /** The id of the API key it sent (a managed key's, or a bootstrap key's `env:` id), even when refused. */
  keyId?: string;
  /** The client that key belongs to, once the key was accepted. */
  client?: string;
  /** POST /mcp: the tools it called (comma-separated when a batch called several). */
  mcpTool?: string;
  /** The fault behind a 5xx, kept for the log line (never sent). */
  err?: unknown;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    // express's own way to type res.locals (declaration merging); an interface, not a type, so that it merges.
    interface Locals extends RequestFacts {
      /** This request's id (X-Request-Id), set when it arrives. */
      requestId: string;
    }
  }
}

/** One request on its way: its server span, and what ends it once the answer is known. */
export interface RequestRecord {
  span: RequestTrace | undefined;
  /** Ends the span, counts the request and writes its line. `sent`: the whole answer was written (false: the connection went first). */
  finish: (status: number, facts: RequestFacts, sent: boolean) => void;
}

/** Where a request is recorded: its span starts now, its id is decided by its door. */
export type RequestRecorder = (request: TracedRequest & { requestId: string }) => RequestRecord;

/** The one line, the metrics and the span of every request, whichever door it came through. */
export function createRequestRecorder({ logger, requestLine, metrics, countedByClient, tracing }: RequestLogDeps): RequestRecorder {
  return (request) => {
    const started = performance.now();
    const span = tracing?.request(request);
    const finish = (status: number, { operationId, route, keyId, client, mcpTool, err }: RequestFacts, sent: boolean) => {
      const seconds = (performance.now() - started) / 1e3;
      span?.end({ status, route, operationId, err });
      metrics.observe(
        operationId,
        status,
        seconds,
        operationId !== undefined && countedByClient.has(operationId) ? { client } : undefined,
        // An exemplar names a trace the backend has: an unsampled request's (its caller said so) is not exported.
        span?.sampled ? span.ids : undefined,
      );
      // One line per request; never the headers (the Authorization header carries the key).
      const line = {
        req: { id: request.requestId, method: request.method, path: request.path },
        res: { statusCode: status },
        responseTime: Math.round(seconds * 1e3),
        operationId,
        route,
        apiKey: keyId,
        client,
        mcpTool,
        trace_id: span?.ids.trace_id,
        span_id: span?.ids.span_id,
      };
      // The common line by its template; the others through pino, with the fault's cause when there is one.
      if (sent && status < 500 && !err) requestLine(line, 'request completed');
      else if (!sent) logger.warn({ ...line, err }, 'request aborted');
      else if (status === 503) logger.warn({ ...line, err }, 'request completed');
      else logger.error({ ...line, err }, 'request failed');
    };
    return { span, finish };
  };
}

/**
 * The headers every response carries, whichever door answers it, put on a response's headers: the
 * request's id, and nosniff, since a JSON API's responses are never to be sniffed as something else.
 */
export function withEveryResponseHeaders(headers: Record<string, string>, requestId: string): Record<string, string> {
  headers['X-Content-Type-Options'] = 'nosniff';
  headers['X-Request-Id'] = requestId;
  return headers;
}

/** The same, set on a response that its door writes header by header (express's routes, and the refusals). */
export function setEveryResponseHeaders(res: ServerResponse, requestId: string): void {
  for (const [name, value] of Object.entries(withEveryResponseHeaders({}, requestId))) res.setHeader(name, value);
}

/**
 * What every request gets, whichever door answers it: its id (a caller's X-Request-Id when it is a
 * plain token, otherwise a new one), its record started, and its finish once the response closes,
 * from `facts` as the door has filled them by then. Gives the request's id and its span; the door
 * puts `withEveryResponseHeaders` on its response.
 */
export function recordResponse(
  record: RequestRecorder,
  req: IncomingMessage,
  res: ServerResponse,
  facts: RequestFacts,
): { requestId: string; span: RequestTrace | undefined } {
  const requestId = requestIdOf(req.headers['x-request-id']);
  const { method = '', headers, httpVersion, socket } = req;
  const url = req.url ?? '';
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  const { span, finish } = record({ method, path, headers, httpVersion, socket, requestId });
  // 'close' follows 'finish' when the response was sent, and comes alone when the connection went first.
  // A response emits it once: `on` spares the wrapper `once` makes for every request.
  res.on('close', () => finish(res.statusCode, facts, res.writableFinished));
  return { requestId, span };
}

/**
 * express's door to the record (`recordResponse`): the facts are `res.locals`, where the routes
 * that answer leave them, and the request's id is there too.
 */
export function requestLog(record: RequestRecorder): RequestHandler {
  return (req, res, next) => {
    const { requestId, span } = recordResponse(record, req, res, res.locals);
    setEveryResponseHeaders(res, requestId);
    res.locals.requestId = requestId;
    withinSpan(span, next);
  };
}
