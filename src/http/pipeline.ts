/**
 * The request pipeline: one request for the API (or a probe) from express to its reply, in one
 * method that calls each step in the order it happens (`ApiPipeline.answer`, below):
 *
 *   1. match       the request against the spec, once (openapi-backend's matchOperation)
 *   2. key         the bearer key, checked here and nowhere else (401; 503 when managed keys cannot be checked)
 *   3. no match    404, 405, or OPTIONS answered with Allow
 *   4. rate limit  the caller's client's quota (429)
 *   4b. scopes     the key holds a scope the operation's security asks for (403)
 *   5. body        read and decoded once (413, 415, 400)
 *   6. validate    parameters and body against the spec (openapi-backend's validateRequest, 400)
 *   7. handler     the operation's handler: input in, reply out
 *   8. contract    VALIDATE_RESPONSES=log|enforce: the reply checked against the spec
 *   9. reply       the reply, or the Error body of whatever failed, with the headers the match calls for,
 *                  its body written by the serialiser compiled from the contract for its operation and status;
 *                  where the spec documents a 304, a 200 carries its ETag, and one If-None-Match names is
 *                  answered 304 instead, its request given back to the rate limit
 *
 * openapi-backend is used through its public methods only (matchOperation, validateRequest,
 * router.matchOperation for 405's Allow); it registers nothing and calls nothing back. A path
 * outside the API root that the spec does not name (/metrics, /docs, /openapi.*) never reaches it.
 */
import { hash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type OpenAPIBackend from 'openapi-backend';
import type { Operation } from 'openapi-backend';
import { allowedMethods } from '../contract/backend';
import type { HandlerMap, Input, OperationId } from '../contract/handlers';
import { type ReplyContractError, type ResponseValidation, createReplyCheck } from '../contract/replyCheck';
import { type ReplySerialisers, compileSerialisers } from '../contract/serialisers';
import { type OperationFacts, type Spec, keyFirst, underApiRoot } from '../contract/spec';
import { describeErrors, fieldErrorsOf, rawIntegerErrors } from '../contract/validation';
import type { Tracing } from '../ops/tracing';
import { type Deadline, requestDeadline } from '../store/deadline';
import type { KeyRegistry } from '../store/apiKeys';
import type { RateDecision, RateLimiter } from '../store/rateLimits';
import { type AuthenticatedKey, createAuthenticator, holdsScopes, insufficientScope, unauthorizedError } from './auth';
import { type DecodedBody, readJsonBody, requireBodyType } from './body';
import { closeIfBodyLeft } from './connection';
import { CONDITIONAL_CACHE_CONTROL, entityTag, noneMatch } from './conditional';
import { HttpError, keepCause, toHttpError } from './errors';
import { type SpecRequest, type Route, compileRoutes } from './operationRoutes';
import { rateLimitHeaders, rateLimited } from './rateLimit';
import { type WireReply, replyOf, sendReply, sendText } from './reply';

/** What the pipeline runs on; the app (`createApp`) passes its own dependencies on, these among them. */
export interface PipelineDeps {
  spec: Spec;
  /** openapi-backend for the spec, initialised (`createBackend`): it matches and validates. */
  backend: OpenAPIBackend;
  /** What each operation runs: the handlers over their stores (withStores), or the mock (createMockHandlers). */
  handlers: HandlerMap;
  /** API_KEYS: keys for development and bootstrap, with every scope. */
  apiKeys: readonly string[];
  /** The managed keys (npm run keys), kept in memory and refreshed; absent: API_KEYS only. */
  keyRegistry?: KeyRegistry;
  /** Counts requests per client; absent: no limit. */
  rateLimiter?: RateLimiter;
  /** How long a request's database work may take (default QUERY_DEADLINE_MS); tests shorten it. */
  deadlineMs?: number;
  /** VALIDATE_RESPONSES: check each handler's reply against the spec (default off); a violation is reported, and under enforce answered with 500. */
  validateResponses?: ResponseValidation;
  /** How a reply that broke the contract is reported (logged and counted). */
  onReplyViolation?: (violation: ReplyContractError, res: Response) => void;
  /** OpenTelemetry tracing (OTEL_TRACES_EXPORTER); absent: off. On: reading the body and the handler are child spans of the request's. */
  tracing?: Tracing;
}

/** What the match found: an operation, or for a path without one, the methods it has (405) or nothing (404). */
type Matched = { route: Route; operation: Operation };
/** `allowed` is looked up when asked for (method by method: not the hot path), at most once. */
type Unmatched = { route: undefined; allowed: () => ReturnType<typeof allowedMethods> };
type Match = Matched | Unmatched;

/** The pipeline of an app, compiled at start-up: each step of a request is one of its methods, called by `answer`. */
class ApiPipeline {
  private readonly spec: Spec;
  private readonly backend: OpenAPIBackend;
  private readonly authenticate: ReturnType<typeof createAuthenticator>;
  private readonly routes: Map<string, Route>;
  private readonly checkReply: ReturnType<typeof createReplyCheck> | undefined;
  private readonly serialisers: ReplySerialisers;
  /** The spec's paths outside the API root (the probes'): the only ones there that enter the pipeline. */
  private readonly outsideRoot: Set<string>;

  constructor(private readonly deps: PipelineDeps) {
    this.spec = deps.spec;
    this.backend = deps.backend;
    this.authenticate = createAuthenticator({ apiKeys: deps.apiKeys, registry: deps.keyRegistry, scopes: deps.spec.scopes });
    this.routes = compileRoutes(deps.spec, deps.backend, deps.handlers);
    this.checkReply = (deps.validateResponses ?? 'off') === 'off' ? undefined : createReplyCheck(deps.backend);
    this.serialisers = compileSerialisers(deps.spec, deps.backend);
    const paths = [...deps.spec.operations.values()].flatMap((op) => op.fullPaths);
    this.outsideRoot = new Set(paths.filter((p) => !underApiRoot(deps.spec, p)));
  }

  /** Requests for the API and the probes; anything else (/metrics, /docs, /openapi.*) goes on to express's routes. */
  readonly handle: RequestHandler = async (req, res, next) => {
    if (!underApiRoot(this.spec, req.path) && !this.outsideRoot.has(req.path.replace(/(.)\/+$/, '$1'))) return next();
    // HEAD is answered as GET; Node sends the headers without the body.
    const request: SpecRequest = {
      method: req.method === 'HEAD' ? 'GET' : req.method,
      path: req.path,
      query: req.query,
      headers: req.headers,
    };
    const found = this.match(request);
    res.locals.operationId = found.route?.facts.operationId;
    res.locals.route = found.route && found.operation.path;
    let reply: WireReply;
    try {
      reply = await this.answer(req, res, request, found);
    } catch (err) {
      const failure = toHttpError(err);
      keepCause(res, failure, err);
      reply = replyOf(failure);
    }
    // 9. The reply. Answers here depend on the caller and the moment: no cache may keep them.
    res.setHeader('Cache-Control', 'no-store');
    closeIfBodyLeft(req, res);
    const deprecation = found.route?.facts.deprecationHeaders;
    if (deprecation) for (const name in deprecation) res.setHeader(name, deprecation[name] as string);
    const operationId = found.route?.facts.operationId;
    try {
      const serialise = this.serialisers.forReply(operationId, reply.status);
      if (found.route?.facts.conditional && reply.status === 200 && reply.body !== undefined)
        return this.sendConditional(req, res, reply, serialise(reply.body));
      sendReply(res, reply, serialise);
    } catch (err) {
      // A body its schema cannot write (a required property missing, a value not of its type): the generic 500, the cause logged.
      const failure = toHttpError(err);
      keepCause(res, failure, err);
      sendReply(res, replyOf(failure), this.serialisers.forReply(operationId, failure.status));
    }
  };

  /**
   * 9, for an operation whose spec documents 304: the 200's strong ETag from the bytes it sends,
   * `Cache-Control: private, no-cache`, and 304 with no body when `If-None-Match` names the tag.
   * The 304 is decided after the key, the scope and the read, as a 200 would be; its request is
   * given back to the rate limit, and its `RateLimit` says so.
   */
  private sendConditional(req: Request, res: Response, reply: WireReply, text: string): void {
    const etag = entityTag(text, reply.headers?.Link);
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', CONDITIONAL_CACHE_CONTROL);
    if (!noneMatch(req.headers['if-none-match'], etag)) return sendText(res, reply.status, text, reply.headers);
    const quota = res.locals.quota as { clientId: string; decision: RateDecision } | undefined;
    if (quota && this.deps.rateLimiter) {
      const headers = rateLimitHeaders(this.deps.rateLimiter.refund(quota.clientId, quota.decision));
      for (const name in headers) res.setHeader(name, headers[name] as string);
    }
    sendReply(res, { status: 304, headers: reply.headers });
  }

  /** Steps 2 to 8 for one matched request; what they find for the log line goes on res.locals as they find it. */
  private async answer(req: Request, res: Response, request: SpecRequest, found: Match): Promise<WireReply> {
    const deadline = requestDeadline(this.deps.deadlineMs);
    const auth = this.needsKey(request, found) ? this.authenticate(req.headers, req.rawHeaders) : undefined;
    // Returned, not thrown: the commonest refusal does not unwind.
    if (auth && !auth.ok) {
      res.locals.keyId = auth.keyId;
      return replyOf(unauthorizedError(auth));
    }
    const key = auth?.key;
    if (key) this.identify(res, key);
    if (!found.route) return this.unmatched(req, res, found);
    const { route } = found;
    if (key) {
      await this.takeQuota(res, key, deadline);
      if (!holdsScopes(key, route.facts.scopes)) return replyOf(insufficientScope(route.facts.operationId, route.facts.scopes[0] ?? []));
    }
    const { tracing } = this.deps;
    const body = await (tracing && route.facts.requestBodyType
      ? tracing.step('read body', () => this.readBody(req, request, route.facts))
      : this.readBody(req, request, route.facts));
    const coerced = this.validate(req, request, found);
    // Returned, not thrown, as the 401 is: the commonest failure of a request that reached validation.
    if (coerced instanceof HttpError) return replyOf(coerced);
    const input = {
      query: coerced.query,
      path: coerced.params,
      body: request.body,
      header: route.headerParams(req.headers),
      requestPath: req.path,
      headers: req.headers,
      caller: key && { keyId: key.keyId, clientId: key.clientId },
      bodyFingerprint: () => (body && body.bytes.length > 0 ? hash('sha256', body.bytes, 'hex') : undefined),
      deadline,
    };
    const handled = tracing
      ? tracing.step(`handler ${route.facts.operationId}`, () => route.handler(input as unknown as Input<OperationId>))
      : route.handler(input as unknown as Input<OperationId>);
    return this.checked(res, found.operation, await handled);
  }

  /** 1. The one match of a request. */
  private match(request: SpecRequest): Match {
    const operation = this.backend.matchOperation(request as never);
    const route = operation && this.routes.get(operation.operationId as string);
    if (route) return { route, operation };
    let allowed: ReturnType<typeof allowedMethods> | null = null;
    return { route: undefined, allowed: () => (allowed === null ? (allowed = allowedMethods(this.backend, request.path)) : allowed) };
  }

  /**
   * 2. Where a key is asked for: under the API root (keyless paths apart), and wherever the
   * operation's security says so. OPTIONS on a known path is answered without one: the contract is public.
   */
  private needsKey(request: SpecRequest, found: Match): boolean {
    if (found.route) return found.route.needsKey || keyFirst(this.spec, request.path);
    return keyFirst(this.spec, request.path) && !(request.method === 'OPTIONS' && found.allowed());
  }

  /** 3. No operation: 404, or the path's methods (405, and OPTIONS's answer, RFC 9110 §9.3.7). */
  private unmatched(req: Request, res: Response, found: Unmatched): WireReply {
    const allowed = found.allowed();
    if (!allowed) throw new HttpError(404, 'not_found', `No route ${req.method} ${req.path}`);
    res.locals.route = allowed.template;
    const allow = allowed.allow.join(', ');
    if (req.method === 'OPTIONS') return { status: 204, headers: { Allow: allow } };
    throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here; allowed: ${allow}`, { Allow: allow });
  }

  /** 2. Who called, for the log line and the metrics; and when the key expires, on every answer from here on. */
  private identify(res: Response, key: AuthenticatedKey): void {
    res.locals.keyId = key.keyId;
    res.locals.client = key.client;
    if (key.expiresHeader !== undefined) res.setHeader('API-Key-Expiration', key.expiresHeader);
  }

  /** 4. The quota of the caller's client: its headers on every answer from here on, and 429 when it is spent. */
  private async takeQuota(res: Response, key: AuthenticatedKey, deadline: Deadline): Promise<void> {
    if (!this.deps.rateLimiter) return;
    const decision = await this.deps.rateLimiter.take(key.clientId, deadline);
    res.locals.quota = { clientId: key.clientId, decision };
    const headers = rateLimitHeaders(decision);
    for (const name in headers) res.setHeader(name, headers[name] as string);
    if (!decision.allowed) throw rateLimited(decision);
  }

  /** 5. The body, read once when the operation takes one; only a JSON document of the right type goes on to validation. */
  private async readBody(req: Request, request: SpecRequest, facts: OperationFacts): Promise<DecodedBody | undefined> {
    if (!facts.requestBodyType) return undefined;
    const body = await readJsonBody(req, facts.requestMediaTypes);
    if (body?.value !== undefined) requireBodyType(body.value, facts.requestBodyType);
    request.body = body?.value;
    return body;
  }

  /**
   * 6. The spec's validators and the integer-text check: one 400 naming each field that failed;
   * else ajv's coerced copy of the parameters, the spec's defaults applied (typed `any` by the library).
   */
  private validate(req: Request, request: SpecRequest, { route, operation }: Matched): { query: unknown; params: unknown } | HttpError {
    const result = this.backend.validateRequest(request as never, operation);
    // ajv's coercion turned validation's copy of the path parameters into numbers: their text is the router's parse of the path.
    const pathParams: Record<string, unknown> = route.integerPathParams
      ? (this.backend.router.parseRequest(request as never, operation).params as Record<string, unknown>)
      : {};
    const raw = rawIntegerErrors(route.facts, req.query, pathParams);
    if (result.valid && raw.length === 0) return result.coerced as { query: unknown; params: unknown };
    const others = (result.errors ?? []).filter((e) => !raw.some((r) => r.instancePath === e.instancePath));
    const failed = [...raw, ...others];
    return new HttpError(400, 'validation_failed', describeErrors(failed), {}, fieldErrorsOf(failed, route.facts.headerParams));
  }

  /** 8. A reply the spec does not allow: reported, and under enforce the generic 500 (the violation is the logged cause). */
  private checked(res: Response, operation: Operation, reply: WireReply): WireReply {
    const violation = this.checkReply?.(operation, reply.status, reply.body);
    if (!violation) return reply;
    this.deps.onReplyViolation?.(violation, res);
    if (this.deps.validateResponses === 'enforce') throw violation;
    return reply;
  }
}

/** The express middleware of the pipeline (`createApp` mounts it before the routes outside the contract). */
export const createApiPipeline = (deps: PipelineDeps): RequestHandler => new ApiPipeline(deps).handle;
