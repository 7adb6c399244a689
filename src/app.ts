import { hash } from 'node:crypto';
import express from 'express';
import type { Request, Response } from 'express';
import OpenAPIBackend, { type Context } from 'openapi-backend';
import swaggerUi from 'swagger-ui-express';
import { readJsonBody } from './body';
import { type Deadline, requestDeadline } from './db';
import { HttpError, errorBody, errorMiddleware, keepCause, sendError, sendJson, toHttpError } from './errors';
import { handlers } from './handlers';
import type { Deps, OperationId } from './handlers/types';
import type { Logger } from './logger';
import { createMetrics } from './metrics';
import { operationalMiddleware } from './middleware';
import { precompileRouting, precompileValidation } from './routing';
import { rateLimitHeaders, rateLimited } from './rateLimitReply';
import { type AuthResult, challenge, createBearerAuth, unauthorizedError } from './security';
import type { RateLimiter } from './store/rateLimits';
import { type Spec, findRoute, underApiRoot } from './spec';
import { customizeAjv, describeErrors, rawIntegerErrors } from './validation';

interface AppOptions {
  spec: Spec;
  apiKeys: readonly string[];
  /** One line per request (and its fault, if any) goes here. */
  logger: Logger;
  /** When set, GET /metrics needs `Authorization: Bearer <metricsToken>`. */
  metricsToken?: string;
  /** Counts requests per API key; absent: no limit. */
  rateLimiter?: RateLimiter;
}

/**
 * With `mock: true` every valid request is answered with the spec's example for the
 * operation instead of its handler (`npm run mock`, no database); routing, authentication
 * and validation stay as they are.
 */
export type AppDeps = AppOptions & (({ mock?: false } & Deps) | { mock: true });

/** The request as openapi-backend sees it; `body` is filled in once the caller is authenticated. */
interface ApiRequest {
  method: string;
  path: string;
  query: Record<string, unknown>;
  headers: Request['headers'];
  body?: unknown;
  /** The body as sent, kept for Idempotency-Key's fingerprint. */
  rawBody?: Buffer;
  /** When its database work (rate-limit count included) must be done. */
  deadline: Deadline;
  auth?: AuthResult;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const errorReply = (err: HttpError): Reply => ({ status: err.status, body: errorBody(err), headers: err.headers });

/** Fails start-up, naming them, when spec operations and handlers do not pair up one to one. */
export function checkHandlersMatchSpec(specOperationIds: Iterable<string>, handlerNames: Iterable<string>): void {
  const ops = new Set(specOperationIds);
  const names = new Set(handlerNames);
  const problems = [
    ...[...ops].filter((id) => !names.has(id)).map((id) => `operation ${id} in the spec has no handler in src/handlers/`),
    ...[...names].filter((n) => !ops.has(n)).map((n) => `handler ${n} names no operation in the spec`),
  ];
  if (problems.length > 0) throw new Error(`The handlers do not match spec/openapi.yaml:\n  - ${problems.join('\n  - ')}`);
}

/** Builds the whole HTTP application from the spec. Never listens and never reads the environment. */
export async function createApp(deps: AppDeps): Promise<express.Express> {
  const { spec } = deps;
  checkHandlersMatchSpec(spec.operations.keys(), Object.keys(handlers));
  const authenticate = createBearerAuth(deps.apiKeys);

  const api = new OpenAPIBackend({
    definition: structuredClone(spec.routingDocument) as never,
    apiRoot: '/', // the routing document's paths carry their base paths (/v1/pets, /healthz)
    strict: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, useDefaults: true },
    customizeAjv,
    // Half the start-up time and a fifth of the memory went to work this server does not need
    // at run time: validating the document against the OpenAPI schema (npm run contract and
    // test/spec.test.ts do that before any release) and compiling a validator for every
    // response and response header (the tests check responses; the server never does).
    // Quick mode skips both and compiles lazily; the request validators are compiled below.
    quick: true,
  });

  api.registerSecurityHandler('bearerAuth', (_c: Context, req: Request, _res: Response, request: ApiRequest) => {
    // Under the API root the key was checked before routing (below); elsewhere it is checked here.
    request.auth ??= authenticate(req.headers, req.rawHeaders);
    return request.auth.ok;
  });

  api.register({
    notFound: (_c: Context, req: Request): never => {
      throw new HttpError(404, 'not_found', `No route ${req.method} ${req.originalUrl.split('?')[0]}`);
    },
    methodNotAllowed: (_c: Context, req: Request, _res: Response, request: ApiRequest): never => {
      const allow = findRoute(spec, request.path)?.allow ?? [];
      throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here; allowed: ${allow.join(', ')}`, { Allow: allow.join(', ') });
    },
    unauthorizedHandler: (_c: Context, _req: Request, _res: Response, request: ApiRequest): never => {
      if (request.auth?.ok !== false) throw new Error('unauthorizedHandler reached without a failed authentication');
      throw unauthorizedError(request.auth);
    },
    // Runs after the security handlers and before validation. Only an authenticated
    // caller gets its body read, so a request without a key costs no body parsing.
    postSecurityHandler: async (c: Context, req: Request, res: Response, request: ApiRequest) => {
      if (!c.security?.authorized && (c.operation.security ?? []).length > 0) return;
      const op = spec.operations.get(c.operation.operationId ?? '');
      if (!op) return;
      if (deps.rateLimiter && request.auth?.ok) {
        const decision = await deps.rateLimiter.take(request.auth.owner, request.deadline);
        const headers = rateLimitHeaders(decision);
        for (const name in headers) res.setHeader(name, headers[name]);
        if (!decision.allowed) throw rateLimited(decision);
      }
      if (op.requestMediaTypes.length > 0) {
        request.body = await readJsonBody(req, res, op.requestMediaTypes);
        // The bytes as sent (express.raw leaves them in req.body).
        if (Buffer.isBuffer(req.body) && req.body.length > 0) request.rawBody = req.body;
      }
      const raw = rawIntegerErrors(op, c.request.query, c.request.params);
      if (raw.length > 0) {
        // Report these together with whatever else validation finds, once per field.
        const others = (api.validator.validateRequest(request as never, c.operation as never).errors ?? []).filter(
          (e) => !raw.some((r) => r.instancePath === e.instancePath),
        );
        throw new HttpError(400, 'validation_failed', describeErrors([...raw, ...others]));
      }
    },
    validationFail: (c: Context): never => {
      throw new HttpError(400, 'validation_failed', describeErrors(c.validation.errors ?? []));
    },
    notImplemented: (c: Context): never => {
      throw new Error(`No handler for ${c.operation?.operationId}`);
    },
  });

  for (const operationId of Object.keys(handlers) as OperationId[]) {
    if (deps.mock) {
      // `Prefer: code=404` asks for another documented response, as mock servers commonly allow.
      api.register(operationId, (c: Context, req: Request): Reply => {
        const code = /\bcode=(\d{3})\b/.exec(String(req.headers.prefer ?? ''))?.[1];
        const { status, mock } = c.api.mockResponseForOperation(operationId, { code: code === undefined ? undefined : Number(code) });
        return { status, body: mock };
      });
    } else {
      const handler = handlers[operationId] as (input: unknown, deps: Deps) => Promise<Reply>;
      const { pets, health } = deps;
      // Header parameters by their names in the spec, as the generated types name them (Node gives them in lower case).
      const headerParams = (spec.operations.get(operationId)?.headerParams ?? []).map((name) => [name, name.toLowerCase()] as const);
      api.register(operationId, (c: Context, req: Request, _res: Response, request: ApiRequest) => {
        const header = Object.fromEntries(headerParams.flatMap(([name, lower]) => (req.headers[lower] === undefined ? [] : [[name, req.headers[lower]]])));
        const caller = request.auth?.ok ? { keyId: request.auth.keyId, owner: request.auth.owner } : undefined;
        return handler({ query: c.request.query, path: c.request.params, body: c.request.requestBody, header, caller, bodyFingerprint: () => request.rawBody && hash('sha256', request.rawBody, 'hex'), deadline: request.deadline }, { pets, health });
      });
    }
  }
  await api.init();
  // Every request validator now, so that no request waits for one to compile.
  api.validator.preCompileRequestValidators();
  precompileRouting(api);
  precompileValidation(api);

  const app = express();
  app.set('case sensitive routing', true);
  app.set('x-powered-by', false);
  app.set('etag', false);
  const metrics = createMetrics();
  app.use(operationalMiddleware({ spec, logger: deps.logger, metrics }));

  // The API (and the probes) first: the routes below serve only what is outside the contract.
  app.use(async (req, res, next) => {
    const route = findRoute(spec, req.path);
    if (!route && !underApiRoot(spec, req.path)) {
      next();
      return;
    }
    // Answers here depend on the caller and the moment: no cache may keep them.
    res.setHeader('Cache-Control', 'no-store');
    if (req.method === 'OPTIONS' && route) {
      // RFC 9110 §9.3.7: the methods this resource supports; no key needed, as the contract is public.
      res.status(204).set('Allow', route.allow.join(', ')).end();
      return;
    }
    const request: ApiRequest = {
      // HEAD is answered as GET; Node sends the headers without the body.
      method: req.method === 'HEAD' ? 'GET' : req.method,
      path: req.path,
      query: req.query as Record<string, unknown>,
      headers: req.headers,
      deadline: requestDeadline(),
    };
    let reply: Reply;
    // No request under the API root is answered without a valid key: not a 404 or 405, nor a
    // 400. So the key is checked first, and a request without one goes no further.
    if (underApiRoot(spec, request.path)) request.auth = authenticate(req.headers, req.rawHeaders);
    if (request.auth?.ok === false) {
      reply = errorReply(unauthorizedError(request.auth));
    } else {
      try {
        reply = (await api.handleRequest(request as never, req, res, request)) as Reply;
      } catch (err) {
        const failure = toHttpError(err);
        keepCause(res, failure, err);
        reply = errorReply(failure);
      }
    }
    const operation = route?.byMethod.get(request.method);
    res.locals.operationId = operation?.operationId;
    res.locals.route = route?.template;
    res.locals.keyId = request.auth?.ok ? request.auth.keyId : undefined;
    if (operation) for (const name in operation.deprecationHeaders) res.setHeader(name, operation.deprecationHeaders[name]);
    sendJson(res, reply.status, reply.body, reply.headers);
  });

  // Prometheus metrics, outside the API root; behind their own token when METRICS_TOKEN is set.
  const metricsAuth = deps.metricsToken === undefined ? undefined : createBearerAuth([deps.metricsToken]);
  app.get('/metrics', async (req, res) => {
    const auth = metricsAuth?.(req.headers, req.rawHeaders);
    if (auth && !auth.ok) {
      sendError(res, new HttpError(401, 'unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>', { 'WWW-Authenticate': challenge(auth.reason) }));
      return;
    }
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  // The contract this server runs, and a reference page for it: public, outside the API root.
  app.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(spec.yamlText);
  });
  app.get('/openapi.json', (_req, res) => {
    res.json(spec.document);
  });
  // Swagger UI from swagger-ui-dist, served from here: the page needs no internet.
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(spec.document as never, { customSiteTitle: `${spec.document.info.title} reference`, swaggerOptions: { validatorUrl: null } }));

  // Anything else: the Error body, as for an unknown path under the API root.
  app.use((req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    sendError(res, new HttpError(404, 'not_found', `No route ${req.method} ${req.path}`));
  });
  app.use(errorMiddleware);
  return app;
}
