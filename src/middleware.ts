import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from './logger';
import type { createMetrics } from './metrics';
import type { Spec } from './spec';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * What every response goes through, whatever answers it: security headers, the metrics, and
 * one log line. The handler that answers sets `res.locals.operationId`, `route` and `keyId`.
 */
export function operationalMiddleware({ spec, logger, metrics }: { spec: Spec; logger: Logger; metrics: ReturnType<typeof createMetrics> }): RequestHandler[] {
  return [
    (req, res, next) => {
      const started = process.hrtime.bigint();
      // A JSON API's responses are never to be sniffed as something else.
      res.setHeader('X-Content-Type-Options', 'nosniff');
      // A caller's X-Request-Id is kept when it is a plain token; otherwise one is made. Either way it is echoed back.
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      const path = req.url.split('?', 1)[0];
      const done = (finished: boolean) => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const { operationId, route, keyId } = res.locals;
        const operation = operationId === undefined ? undefined : spec.operations.get(operationId);
        const deprecated = operation && Object.keys(operation.deprecationHeaders).length > 0 ? { apiKey: keyId } : undefined;
        metrics.observe(operation?.operationId, res.statusCode, seconds, deprecated);
        // One line per request; never the headers (the Authorization header carries the key).
        const err = (res as { err?: Error }).err;
        const line = { req: { id, method: req.method, path }, res: { statusCode: res.statusCode }, responseTime: Math.round(seconds * 1e3), operationId, route, apiKey: keyId, ...(err ? { err } : {}) };
        if (!finished) logger.warn(line, 'request aborted');
        else if (res.statusCode === 503) logger.warn(line, 'request completed');
        else if (res.statusCode >= 500 || err) logger.error(line, 'request failed');
        else logger.info(line, 'request completed');
      };
      let logged = false;
      res.once('finish', () => {
        logged = true;
        done(true);
      });
      res.once('close', () => {
        if (!logged) done(false);
      });
      next();
    },
  ];
}
