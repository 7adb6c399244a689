import type { RequestHandler, Router } from 'express';
import express from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Spec } from '../contract/spec';
import type { Metrics } from '../ops/metrics';
import { challenge, createBearerAuth } from './auth';
import { HttpError, sendError } from './errors';

/** GET /metrics in Prometheus format, outside the API root; behind its own token when one is given (METRICS_TOKEN). */
export function metricsRoute(metrics: Metrics, token: string | undefined): RequestHandler {
  const authenticate = token === undefined ? undefined : createBearerAuth([token]);
  return async (req, res) => {
    const auth = authenticate?.(req.headers, req.rawHeaders);
    if (auth && !auth.ok) {
      sendError(res, new HttpError(401, 'unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>', { 'WWW-Authenticate': challenge(auth.reason) }));
      return;
    }
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  };
}

/** The contract this server runs, and a reference page for it: public, outside the API root. */
export function contractRoutes(spec: Spec): Router {
  const router = express.Router({ caseSensitive: true });
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(spec.yamlText);
  });
  router.get('/openapi.json', (_req, res) => {
    res.json(spec.document);
  });
  // Swagger UI from swagger-ui-dist, served from here: the page needs no internet.
  router.use('/docs', swaggerUi.serve, swaggerUi.setup(spec.document as never, { customSiteTitle: `${spec.document.info.title} reference`, swaggerOptions: { validatorUrl: null } }));
  return router;
}

/** Anything no route answered: the Error body, as for an unknown path under the API root. */
export const notFound: RequestHandler = (req, res) => {
  res.setHeader('Cache-Control', 'no-store');
  sendError(res, new HttpError(404, 'not_found', `No route ${req.method} ${req.path}`));
};
