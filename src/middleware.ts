import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { type Logger, type RequestLogFields, requestLineWriter } from './logger';
import type { createMetrics } from './metrics';
import type { Spec } from './spec';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * What every response goes through, whatever answers it: security headers, the metrics, and
 * one log line. The handler that answers sets `res.locals.operationId`, `route` and `keyId`.
 */
export function operationalMiddleware({ spec, logger, metrics }: { spec: Spec; logger: Logger; metrics: ReturnType<typeof createMetrics> }): RequestHandler[] {
  // Which operations are deprecated, known once: their calls are also counted by API key.
  const deprecated = new Set([...spec.operations.values()].filter((op) => Object.keys(op.deprecationHeaders).length > 0).map((op) => op.operationId));
  const logRequest = requestLineWriter(logger);
  return [
    (req, res, next) => {
      const started = performance.now();
      // A JSON API's responses are never to be sniffed as something else.
      res.setHeader('X-Content-Type-Options', 'nosniff');
      // A caller's X-Request-Id is kept when it is a plain token; otherwise one is made. Either way it is echoed back.
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      const path = req.url.split('?', 1)[0];
      // 'close' follows 'finish' when the response was sent, and comes alone when the connection went first.
      res.once('close', () => {
        const finished = res.writableFinished;
        const seconds = (performance.now() - started) / 1e3;
        const { operationId, route, keyId } = res.locals;
        metrics.observe(operationId, res.statusCode, seconds, deprecated.has(operationId) ? { apiKey: keyId } : undefined);
        // One line per request; never the headers (the Authorization header carries the key).
        const err = (res as { err?: Error }).err;
        const line: RequestLogFields = { req: { id, method: req.method, path }, res: { statusCode: res.statusCode }, responseTime: Math.round(seconds * 1e3), operationId, route, apiKey: keyId };
        // The common line by its template; the others through pino, with the fault's cause when there is one.
        if (finished && res.statusCode < 500 && !err) logRequest(line, 'request completed');
        else if (!finished) logger.warn({ ...line, err }, 'request aborted');
        else if (res.statusCode === 503) logger.warn({ ...line, err }, 'request completed');
        else logger.error({ ...line, err }, 'request failed');
      });
      next();
    },
  ];
}
