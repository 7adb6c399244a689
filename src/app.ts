import express from 'express';
import { createBackend } from './contract/backend';
import { type Spec, checkHandlersMatchSpec, deprecatedOperations } from './contract/spec';
import { corsMiddleware } from './http/cors';
import { errorMiddleware } from './http/reply';
import { type CoreDeps, RequestCore } from './http/core';
import { type App, apiListener, served } from './http/listener';
import { inProcessDoor } from './http/inProcessDoor';
import { contractRoutes, metricsRoute, notFound } from './http/docsAndMetrics';
import type { Logging } from './ops/logger';
import { type Metrics, createMetrics } from './ops/metrics';
import { replyViolationReport } from './ops/replyViolations';
import { createRequestRecorder } from './ops/requestLog';
import { tracedSteps } from './ops/tracing';
import { queriesInFlight } from './store/database/db';
import type { KeyRegistry } from './store/keys/registry';
import { createAuthenticator } from './http/auth';
import { checkToolsMatchSpec, isTool } from './contract/mcpTools';
import { mcpTools } from '../generated/mcp-tools';

export type { App };

/**
 * What the app is built from: everything the request core takes (`CoreDeps`, documented there)
 * but what the app makes itself (openapi-backend, the bearer check, the report of a reply that
 * broke the contract), and what the app's other middleware needs.
 */
export interface AppDeps extends Omit<CoreDeps, 'backend' | 'authenticate' | 'onReplyViolation'> {
  /**
   * openapi-backend for this spec (`createBackend`); absent: made here. It holds only what the spec
   * compiles to, so the apps one process builds from one spec may share one (the tests' apps do).
   */
  backend?: CoreDeps['backend'];
  /** API_KEYS: the bootstrap keys, with every scope. */
  bootstrapKeys: readonly string[];
  /** The managed keys (npm run keys), kept in memory and refreshed; absent: the bootstrap keys only. */
  keyRegistry?: KeyRegistry;
  /** One line per request (and its fault, if any) goes here. */
  logging: Logging;
  /** When set, GET /metrics needs `Authorization: Bearer <metricsToken>`. */
  metricsToken?: string;
  /** The metrics served (shared with METRICS_PORT's app when it is set); made here when absent. */
  metrics?: Metrics;
  /** METRICS_PORT is set: /metrics is served there (createMetricsApp), and not on this app at all. */
  metricsOnOwnPort?: boolean;
  /** CORS_ORIGINS: web origins allowed to call from a browser, or `*`; absent: no CORS headers. */
  corsOrigins?: readonly string[] | '*';
  /** MCP_ENABLED: the MCP endpoint at /mcp; `loopbackOnly` when HOST is a loopback address (the Host must name loopback). */
  mcp?: { loopbackOnly: boolean };
}

/** The methods the spec's operations use, with HEAD beside GET and OPTIONS: what a preflight may be told. */
function methodsOf(spec: Spec): string[] {
  const used = [...new Set([...spec.operations.values()].map((op) => op.method))];
  return [...used.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])), 'OPTIONS'];
}

/** Builds the whole HTTP application from the spec. Never listens and never reads the environment. */
export async function createApp(deps: AppDeps): Promise<App> {
  const { spec } = deps;
  checkHandlersMatchSpec(spec.operations.keys(), Object.keys(deps.handlers));
  const backend = deps.backend ?? (await createBackend(spec));
  const metrics = deps.metrics ?? createMetrics({ queriesInFlight });
  // One core, one bearer check and one record of requests, for both doors: the server's listener and /mcp's.
  const authenticate = createAuthenticator({ bootstrapKeys: deps.bootstrapKeys, keyRegistry: deps.keyRegistry, scopes: spec.scopes });
  const core = new RequestCore({
    ...deps,
    backend,
    authenticate,
    onReplyViolation: replyViolationReport(metrics, deps.logging.logger, deps.validateResponses ?? 'off'),
  });
  const record = createRequestRecorder({ ...deps.logging, metrics, countedByClient: deprecatedOperations(spec), tracing: deps.tracing });

  // What the core does not claim: express's routes. The listener (apiListener) has given each of
  // their requests its id, nosniff, its record and the Host rule, as it gives the core's.
  const app = express();
  app.set('case sensitive routing', true);
  app.set('x-powered-by', false);
  app.set('etag', false);
  // MCP_ENABLED: POST /mcp, a door of the listener with its own CORS (listed origins only), express never seeing it.
  let mcp: Parameters<typeof apiListener>[0]['mcp'];
  if (deps.mcp) {
    // Loaded here, not imported above: the MCP SDK is a fifth of the app's load time, which a
    // service without MCP_ENABLED (the default) does not pay.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { MCP_PATH, mcpDoor } = require('./mcp/endpoint') as typeof import('./mcp/endpoint');
    checkToolsMatchSpec(
      mcpTools,
      [...spec.operations.values()].filter((op) => isTool(spec, op)).map((op) => op.operationId),
    );
    const door = mcpDoor({
      tools: mcpTools,
      authenticate,
      call: inProcessDoor(core, record),
      name: 'animal-store-api',
      version: spec.document.info.version,
      allowedOrigins: deps.corsOrigins === '*' || deps.corsOrigins === undefined ? [] : deps.corsOrigins,
      loopbackOnly: deps.mcp.loopbackOnly,
      metrics,
      traced: tracedSteps(deps.tracing),
    });
    mcp = { path: MCP_PATH, door };
  }
  // Browsers on the listed origins: CORS headers, and preflights answered without a key (the listener runs it before the core).
  const cors = deps.corsOrigins ? corsMiddleware(deps.corsOrigins, methodsOf(spec)) : undefined;
  if (cors) app.use(cors);
  // Outside the contract: metrics, the contract itself and its reference page.
  if (!deps.metricsOnOwnPort) app.get('/metrics', metricsRoute(metrics, deps.metricsToken, 'public'));
  app.use(contractRoutes(spec));
  app.use(notFound);
  app.use(errorMiddleware);
  return served(app, apiListener({ core, record, cors, mcp, rest: app }));
}

/**
 * The app of METRICS_PORT: GET /metrics with every metric (behind METRICS_TOKEN when it is set),
 * and the Error body for anything else. A port of its own is kept off the public network.
 */
export function createMetricsApp(metrics: Metrics, metricsToken?: string): App {
  const app = express();
  app.set('x-powered-by', false);
  app.set('etag', false);
  app.get('/metrics', metricsRoute(metrics, metricsToken, 'full'));
  app.use(notFound);
  app.use(errorMiddleware);
  return served(app);
}
