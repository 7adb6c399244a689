import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from './logger';
import type { createMetrics } from './metrics';
import type { Spec } from './spec';

/**
 * What every response goes through, whatever answers it: security headers, the metrics, and
 * one log line. The handler that answers sets `res.locals.operationId`, `route` and `keyId`.
 */
export function operationalMiddleware({ spec, logger, metrics }: { spec: Spec; logger: Logger; metrics: ReturnType<typeof createMetrics> }): RequestHandler[] {
  return [
    // A JSON API's responses are never to be sniffed as something else.
    (_req, res, next) => {
      res.setHeader('X-Content-Type-Options', 'nosniff');
      next();
    },
    (_req, res, next) => {
      const started = process.hrtime.bigint();
      res.on('finish', () => {
        const operation = res.locals.operationId === undefined ? undefined : spec.operations.get(res.locals.operationId);
        const deprecated = operation && Object.keys(operation.deprecationHeaders).length > 0 ? { apiKey: res.locals.keyId } : undefined;
        metrics.observe(operation?.operationId, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9, deprecated);
      });
      next();
    },
    pinoHttp({
      logger,
      // A caller's X-Request-Id is kept when it is a plain token; otherwise one is made. Either way it is echoed back.
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, err) => (res.statusCode === 503 ? 'warn' : res.statusCode >= 500 || err ? 'error' : 'info'),
      customSuccessMessage: () => 'request completed',
      customErrorMessage: () => 'request failed',
      customProps: (_req, res) => ({ operationId: res.locals?.operationId, route: res.locals?.route, apiKey: res.locals?.keyId }),
      // Never the headers: the Authorization header carries the key.
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split('?')[0] }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
      wrapSerializers: false,
      quietReqLogger: true,
    }) as RequestHandler,
  ];
}
