import type { RequestHandler, Router } from 'express';
import express from 'express';
import type { Spec } from '../contract/spec';
import type { Metrics } from '../ops/metrics';
import { challenge, createAuthenticator } from './auth';
import { closeIfBodyLeft } from './connection';
import { HttpError } from './errors';
import { sendError } from './reply';

/**
 * GET /metrics in Prometheus format, outside the API root. With a token (METRICS_TOKEN), only
 * for its bearer, who sees every metric; without one, `open` says what anyone sees: `full` on a
 * port of its own (METRICS_PORT, kept off the public network), `public` on the API port
 * (nothing that names a caller or the runtime: `createMetrics`).
 */
export function metricsRoute(metrics: Metrics, token: string | undefined, open: 'full' | 'public'): RequestHandler {
  const authenticate = token === undefined ? undefined : createAuthenticator({ bootstrapKeys: [token], scopes: [] });
  const registry = token !== undefined || open === 'full' ? metrics.fullRegistry : metrics.registry;
  return async (req, res) => {
    const auth = authenticate?.(req.headers, req.rawHeaders);
    if (auth && !auth.ok) {
      sendError(
        res,
        new HttpError(401, 'unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>', {
          // No registry here: a token is known or it is not (never `unavailable`).
          'WWW-Authenticate': challenge(auth.reason === 'unavailable' ? 'unknown' : auth.reason),
        }),
      );
      return;
    }
    res.type(registry.contentType).send(await registry.metrics());
  };
}

/**
 * The document the reference page shows: the spec, with this server first in every server list
 * as a relative URL (`/v1`, and `/` for the probes), so that "Try it out" calls the origin the page
 * was loaded from, whatever host, port or proxy is in front. The spec's own servers stay listed
 * after it (its public ones: those marked x-internal are left out, as from /openapi.yaml and /openapi.json).
 */
export function referencePageDocument(spec: Spec): Spec['document'] {
  const doc = structuredClone(spec.publicDocument);
  const here = (url: string) => ({ url, description: 'This server (the origin this page was loaded from)' });
  doc.servers = [here(spec.apiRoot), ...(doc.servers ?? [])];
  for (const item of Object.values(doc.paths ?? {})) {
    if (item?.servers) item.servers = [here('/'), ...item.servers];
  }
  return doc;
}

/**
 * Run in the reference page: the contract's description is written by topic (`## Pagination`),
 * and Swagger UI renders its headings without ids and its links into a new tab. This gives each
 * heading the id GitHub would (`#pagination`, `#browsers-cors`), so that the description's
 * "Topics" line and a link from anywhere else (/docs/#rate-limits) lead to the topic, and keeps
 * in-page links in the page.
 */
const TOPIC_ANCHORS = `(() => {
  const slug = (text) => text.trim().toLowerCase().replace(/[^a-z0-9 _-]/g, '').replace(/ /g, '-');
  const mark = () => {
    for (const h of document.querySelectorAll('.information-container .info__description :is(h2, h3)')) if (!h.id) h.id = slug(h.textContent);
    for (const a of document.querySelectorAll('.information-container .info__description a[href^="#"][target]')) a.removeAttribute('target');
    // Swagger UI's deep linking rewrites #rate-limits as #/rate-limits: both lead to the topic.
    const wanted = decodeURIComponent(location.hash.slice(1)).replace(/^\\//, '');
    const topic = wanted && document.getElementById(wanted);
    if (topic && !topic.dataset.reached) { topic.dataset.reached = 'yes'; topic.scrollIntoView(); }
  };
  new MutationObserver(mark).observe(document.documentElement, { childList: true, subtree: true });
  // A topic link is followed here: the page's own hash handling would otherwise take it for an operation.
  document.addEventListener('click', (event) => {
    const link = event.target instanceof Element && event.target.closest('.info__description a[href^="#"]');
    const topic = link && document.getElementById(decodeURIComponent(link.getAttribute('href').slice(1)));
    if (!topic) return;
    event.preventDefault();
    history.pushState(null, '', link.getAttribute('href'));
    topic.scrollIntoView();
  });
})();`;

/** The contract this server runs, and a reference page for it: public, outside the API root. */
export function contractRoutes(spec: Spec): Router {
  const router = express.Router({ caseSensitive: true });
  // The published contract: without the servers marked x-internal.
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(spec.publicYamlText);
  });
  router.get('/openapi.json', (_req, res) => {
    res.json(spec.publicDocument);
  });
  // Swagger UI from swagger-ui-dist, served from here: the page needs no internet. Loaded on the
  // first request for it: swagger-ui-dist parses a megabyte bundle when required, about 80 ms of
  // the server's start-up otherwise (docs/performance.md).
  const page = referencePageDocument(spec);
  const ui = {
    customSiteTitle: `${spec.document.info.title} reference`,
    swaggerOptions: { validatorUrl: null, deepLinking: true },
    customJsStr: TOPIC_ANCHORS,
  };
  let docs: Promise<Router> | undefined;
  const loadDocs = () =>
    (docs ??= import('swagger-ui-express').then(({ default: swaggerUi }) => {
      const pageRoutes = express.Router({ caseSensitive: true });
      pageRoutes.use('/docs', swaggerUi.serveFiles(page as never, ui));
      // The page itself at /docs/ only (/docs redirects there); any other path under /docs is a 404 Error body.
      pageRoutes.get('/docs/', swaggerUi.setup(page as never, ui));
      return pageRoutes;
    }));
  router.use('/docs', ((req, res, next) => {
    // The page is where users paste their key: no other site may frame it (clickjacking).
    res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
    res.setHeader('X-Frame-Options', 'DENY');
    // Only the page and its assets; the rest of swagger-ui-dist's folder (package.json, README.md,
    // its own index.html) goes to notFound. Decoded first, so that `package%2ejson` is package.json.
    let path: string;
    try {
      path = decodeURIComponent(req.path);
    } catch {
      return next('router');
    }
    next(path === '/' || /^\/[A-Za-z0-9._-]+\.(?:js|css|png|map)$/.test(path) ? undefined : 'router');
  }) satisfies RequestHandler);
  router.use(((req, res, next) => {
    if (!req.path.startsWith('/docs')) return next();
    loadDocs().then((pageRoutes) => pageRoutes(req, res, next), next);
  }) satisfies RequestHandler);
  return router;
}

/** Anything no route answered: the Error body, as for an unknown path under the API root. */
export const notFound: RequestHandler = (req, res) => {
  res.setHeader('Cache-Control', 'no-store');
  closeIfBodyLeft(req, res);
  sendError(res, new HttpError(404, 'not_found', `No route ${req.method} ${req.path}`));
};
