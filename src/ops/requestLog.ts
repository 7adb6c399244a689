import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger, RequestLineWriter } from './logger';
import type { Metrics } from './metrics';
import type { Tracing } from './tracing';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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
 * What a request's handling learns that its log line, metrics and span report, on `res.locals`:
 * written by whoever answers, as it learns them, and read here once the response is done.
 */
export interface RequestFacts {
  /** The operation the request matched. */
  operationId?: string;
  /** The route template it matched (`/v1/pets/{petId}`), also for a 405. */
  route?: string;
  /** The id of the API key it sent (a managed key's, or an API_KEYS key's `env:` id), even when refused. */
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
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Locals extends RequestFacts {}
  }
}

/**
 * What every response goes through, whatever answers it: the request id, the security
 * header, the metrics and one log line, from the request's facts (`RequestFacts`).
 */
export function requestLog({ logger, requestLine, metrics, countedByClient, tracing }: RequestLogDeps): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const span = tracing?.request(req);
    // A JSON API's responses are never to be sniffed as something else.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // A caller's X-Request-Id is kept when it is a plain token; otherwise one is made. Either way it is echoed back.
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', id);
    const path = req.url.split('?', 1)[0] ?? '';
    // 'close' follows 'finish' when the response was sent, and comes alone when the connection went first.
    // A response emits it once: `on` spares the wrapper `once` makes for every request.
    res.on('close', () => {
      const finished = res.writableFinished;
      const seconds = (performance.now() - started) / 1e3;
      const { operationId, route, keyId, client, mcpTool, err } = res.locals;
      span?.end({ status: res.statusCode, route, operationId, err });
      metrics.observe(
        operationId,
        res.statusCode,
        seconds,
        operationId !== undefined && countedByClient.has(operationId) ? { client } : undefined,
        // An exemplar names a trace the backend has: an unsampled request's (its caller said so) is not exported.
        span?.sampled ? span.ids : undefined,
      );
      // One line per request; never the headers (the Authorization header carries the key).
      const line = {
        req: { id, method: req.method, path },
        res: { statusCode: res.statusCode },
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
      if (finished && res.statusCode < 500 && !err) requestLine(line, 'request completed');
      else if (!finished) logger.warn({ ...line, err }, 'request aborted');
      else if (res.statusCode === 503) logger.warn({ ...line, err }, 'request completed');
      else logger.error({ ...line, err }, 'request failed');
    });
    if (span) span.run(next);
    else next();
  };
}
