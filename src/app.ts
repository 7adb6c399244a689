import express from 'express';
import { createBackend } from './contract/backend';
import type { ResponseValidation } from './contract/replyCheck';
import { type Spec, checkHandlersMatchSpec, deprecatedOperations } from './contract/spec';
import type { HandlerMap } from './contract/handlers';
import { corsMiddleware } from './http/cors';
import { errorMiddleware } from './http/reply';
import { requireValidHost } from './http/host';
import { createApiPipeline } from './http/pipeline';
import { contractRoutes, metricsRoute, notFound } from './http/docsAndMetrics';
import type { Logging } from './ops/logger';
import { type Metrics, createMetrics } from './ops/metrics';
import type { Tracing } from './ops/tracing';
import { replyViolationReport } from './ops/replyViolations';
import { requestLog } from './ops/requestLog';
import type { KeyRegistry } from './store/apiKeys';
import { queriesInFlight } from './store/db';
import type { RateLimiter } from './store/rateLimits';

export interface AppDeps {
  spec: Spec;
  /** What each operation runs: the handlers over their stores (withStores), or the mock (createMockHandlers). */
  handlers: HandlerMap;
  /** API_KEYS: keys for development and bootstrap, with every scope. */
  apiKeys: readonly string[];
  /** The managed keys (npm run keys), held in memory and refreshed; absent: API_KEYS only. */
  keyRegistry?: KeyRegistry;
  /** One line per request (and its fault, if any) goes here. */
  logging: Logging;
  /** When set, GET /metrics needs `Authorization: Bearer <metricsToken>`. */
  metricsToken?: string;
  /** The metrics served (main.ts makes them, with the read replica's state, and shares them with METRICS_PORT); made here when absent. */
  metrics?: Metrics;
  /** METRICS_PORT is set: /metrics is served there (createMetricsApp), and not on this app at all. */
  metricsOnOwnPort?: boolean;
  /** Counts requests per client; absent: no limit. */
  rateLimiter?: RateLimiter;
  /** How long a request's database work may take; default QUERY_DEADLINE_MS. */
  deadlineMs?: number;
  /** VALIDATE_RESPONSES: check each handler's reply against the spec; default off. */
  validateResponses?: ResponseValidation;
  /** CORS_ORIGINS: web origins allowed to call from a browser, or `*`; absent: no CORS headers. */
  corsOrigins?: readonly string[] | '*';
  /** OpenTelemetry tracing (OTEL_TRACES_EXPORTER); absent: off. */
  tracing?: Tracing;
}

/** The methods the spec's operations use, with HEAD beside GET and OPTIONS: what a preflight may be told. */
function methodsOf(spec: Spec): string[] {
  const used = [...new Set([...spec.operations.values()].map((op) => op.method))];
  return [...used.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])), 'OPTIONS'];
}

/** Builds the whole HTTP application from the spec. Never listens and never reads the environment. */
export async function createApp(deps: AppDeps): Promise<express.Express> {
  const { spec } = deps;
  checkHandlersMatchSpec(spec.operations.keys(), Object.keys(deps.handlers));
  const backend = await createBackend(spec);
  const metrics = deps.metrics ?? createMetrics({ queriesInFlight });

  const app = express();
  app.set('case sensitive routing', true);
  app.set('x-powered-by', false);
  app.set('etag', false);
  // Every response: request id, nosniff, metrics, one log line (and with tracing on, the request's server span).
  app.use(requestLog({ ...deps.logging, metrics, countedByClient: deprecatedOperations(spec), tracing: deps.tracing }));
  // RFC 9112 §3.2: one valid Host, or 400.
  app.use(requireValidHost);
  // Browsers on the listed origins: CORS headers, and preflights answered without a key.
  if (deps.corsOrigins) app.use(corsMiddleware(deps.corsOrigins, methodsOf(spec)));
  // The API and the probes: everything the spec describes; the rest of the routes go on to the routes below.
  app.use(
    createApiPipeline({
      spec,
      backend,
      handlers: deps.handlers,
      apiKeys: deps.apiKeys,
      keyRegistry: deps.keyRegistry,
      rateLimiter: deps.rateLimiter,
      deadlineMs: deps.deadlineMs,
      validateResponses: deps.validateResponses,
      tracing: deps.tracing,
      onReplyViolation: replyViolationReport(metrics, deps.logging.logger, deps.validateResponses ?? 'off'),
    }),
  );
  // Outside the contract: metrics, the contract itself and its reference page.
  if (!deps.metricsOnOwnPort) app.get('/metrics', metricsRoute(metrics, deps.metricsToken, 'public'));
  app.use(contractRoutes(spec));
  app.use(notFound);
  app.use(errorMiddleware);
  return app;
}

/**
 * The app of METRICS_PORT: GET /metrics with every metric (behind METRICS_TOKEN when it is set),
 * and the Error body for anything else. A port of its own is kept off the public network.
 */
export function createMetricsApp(metrics: Metrics, metricsToken?: string): express.Express {
  const app = express();
  app.set('x-powered-by', false);
  app.set('etag', false);
  app.get('/metrics', metricsRoute(metrics, metricsToken, 'full'));
  app.use(notFound);
  app.use(errorMiddleware);
  return app;
}
