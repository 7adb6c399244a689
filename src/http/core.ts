/**
 * The request core: one request for the API (or a probe) answered as a value, whichever door it
 * came through (the server's listener, `http/listener.ts`; an MCP tool call, `http/inProcessDoor.ts`). It takes
 * an `ApiRequest` and gives back the reply (`WrittenReply`: status, every header, the body written)
 * with the facts its log line, metrics and span need (`AnswerFacts`). `RequestCore.answer` calls
 * each step in the order it happens:
 *
 *   1. match       the request against the spec, once (openapi-backend's matchOperation)
 *   2. key         the bearer key, checked here and nowhere else (401; 503 when managed keys cannot be checked),
 *                  unless the door brings the caller it authenticated already
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
 * router.matchOperation for 405's Allow); it registers nothing and calls nothing back. Nothing
 * here knows express, a socket or a response object.
 */
import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type OpenAPIBackend from 'openapi-backend';
import type { Operation } from 'openapi-backend';
import { allowedMethods } from '../contract/backend';
import type { HandlerMap, Input, OperationId } from '../contract/handlers';
import { type ReplyContractError, type ResponseValidation, createReplyCheck } from '../contract/replyCheck';
import { type ReplySerialisers, compileSerialisers } from '../contract/serialisers';
import { type OperationFacts, type Spec, keyFirst, underApiRoot } from '../contract/spec';
import { describeErrors, fieldErrorsOf, rawIntegerErrors } from '../contract/validation';
import type { RequestFacts } from '../ops/requestLog';
import { type Traced, type Tracing, tracedSteps } from '../ops/tracing';
import { type Deadline, requestDeadline } from '../store/database/deadline';
import type { RateDecision, RateLimiter } from '../store/rateLimits';
import { type AuthenticatedKey, type Authenticator, holdsScopes, insufficientScope, unauthorizedError } from './auth';
import { type BodySource, type DecodedBody, readJsonBody, requireBodyType } from './body';
import { CONDITIONAL_CACHE_CONTROL, entityTag, matchesTag } from './conditional';
import { HttpError, keepCause, toHttpError } from './errors';
import { type SpecRequest, type Route, compileRoutes } from './operationRoutes';
import { rateLimitHeaders, rateLimited } from './rateLimit';
import { type UnwrittenReply, replyOf } from './reply';

/** A request as the core reads it: a value, whichever door it came through. */
export interface ApiRequest {
  /** As sent; HEAD is answered as GET (the door sends no body with it). */
  method: string;
  /** The request-target: the path and the query (`/v1/pets?limit=5`), or the absolute form. */
  target: string;
  /** Lower-case names, as Node gives them (a repeated field joined). */
  headers: IncomingHttpHeaders;
  /** The fields as sent, name and value in turn: the repeated-Authorization rule reads them. */
  rawHeaders: readonly string[];
  /** The request's id (X-Request-Id), for what is reported about it apart from its log line. */
  requestId: string;
  body: BodySource;
  /** The caller, when the door authenticated its key already (an MCP tool call, on its /mcp request's key): not checked again. */
  caller?: AuthenticatedKey;
}

/** The answer, as the wire has it: its status, every header, and the body already written. */
export interface WrittenReply {
  status: number;
  headers: Record<string, string>;
  body?: string;
  /** The body's UTF-8 bytes, when the core encoded it already (for its ETag): what a door that sends bytes sends, rather than encoding `body` again. */
  bytes?: Buffer;
}

/** What answering a request learned, for its log line, metrics and span: the request's facts, and the rate limit's decision on it. */
export interface AnswerFacts extends Omit<RequestFacts, 'mcpTool'> {
  /** The rate limit's decision on it, and whose quota it was. */
  quota?: { clientId: string; decision: RateDecision };
}

export interface Answer {
  reply: WrittenReply;
  facts: AnswerFacts;
}

/** What the core runs on; the app (`createApp`) passes its own dependencies on, these among them. */
export interface CoreDeps {
  spec: Spec;
  /** openapi-backend for the spec, initialised (`createBackend`): it matches and validates. */
  backend: OpenAPIBackend;
  /** What each operation runs: the handlers over their stores (withStores), or the mock (createMockHandlers). */
  handlers: HandlerMap;
  /** The bearer check, bootstrap and managed keys (`createAuthenticator`): one for both doors. */
  authenticate: Authenticator;
  /** Counts requests per client; absent: no limit. */
  rateLimiter?: RateLimiter;
  /** How long a request's database work may take (default QUERY_DEADLINE_MS); tests shorten it. */
  deadlineMs?: number;
  /** VALIDATE_RESPONSES: check each handler's reply against the spec (default off); a violation is reported, and under enforce answered with 500. */
  validateResponses?: ResponseValidation;
  /** How a reply that broke the contract is reported (logged and counted), with the request's id. */
  onReplyViolation?: (violation: ReplyContractError, requestId: string) => void;
  /** OpenTelemetry tracing (OTEL_TRACES_EXPORTER); absent: off. On: reading the body and the handler are child spans of the request's. */
  tracing?: Tracing;
}

/** What the match found: an operation, or for a path without one, the methods it has (405) or nothing (404). */
type Matched = { route: Route; operation: Operation };
/** `allowed` is looked up when asked for (method by method: not the hot path), at most once. */
type Unmatched = { route: undefined; allowed: () => ReturnType<typeof allowedMethods> };
type Match = Matched | Unmatched;

/** One request on its way through the core: the value, its parse for the spec, and what the steps add to its answer. */
interface InFlight {
  request: ApiRequest;
  spec: SpecRequest;
  /** Headers every answer from here on carries (API-Key-Expiration, RateLimit), the reply's own set over them. */
  headers: Record<string, string>;
  facts: AnswerFacts;
}

/** The path and the query of a request-target (RFC 9112 §3.2): origin form, or the absolute form a server must accept. */
export function splitTarget(target: string): { path: string; query: string } {
  if (target.startsWith('/') && !target.includes('#')) {
    const at = target.indexOf('?');
    return at === -1 ? { path: target, query: '' } : { path: target.slice(0, at), query: target.slice(at + 1) };
  }
  try {
    const url = new URL(target, 'http://request.invalid');
    return { path: url.pathname, query: url.search.slice(1) };
  } catch {
    return { path: target, query: '' };
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** A reply with a JSON body already written (and encoded, when `bytes` are given). */
function jsonReply(status: number, text: string, headers: Record<string, string>, bytes?: Buffer): WrittenReply {
  headers['Content-Type'] = JSON_TYPE;
  headers['Content-Length'] = String(bytes ? bytes.length : Buffer.byteLength(text));
  return { status, headers, body: text, bytes };
}

/** The core of an app, compiled at start-up: each step of a request is one of its methods, called by `answer`. */
export class RequestCore {
  private readonly spec: Spec;
  private readonly backend: OpenAPIBackend;
  private readonly routes: Map<string, Route>;
  private readonly checkReply: ReturnType<typeof createReplyCheck> | undefined;
  private readonly serialisers: ReplySerialisers;
  /** The spec's paths outside the API root (the probes'): the only ones there that the core answers. */
  private readonly outsideRoot: Set<string>;
  /** Reading the body and the handler, each a child span of the request's with tracing on. */
  private readonly traced: Traced;

  constructor(private readonly deps: CoreDeps) {
    this.spec = deps.spec;
    this.backend = deps.backend;
    this.routes = compileRoutes(deps.spec, deps.backend, deps.handlers);
    this.checkReply = (deps.validateResponses ?? 'off') === 'off' ? undefined : createReplyCheck(deps.backend);
    this.serialisers = compileSerialisers(deps.spec, deps.backend);
    const paths = [...deps.spec.operations.values()].flatMap((op) => op.fullPaths);
    this.outsideRoot = new Set(paths.filter((p) => !underApiRoot(deps.spec, p)));
    this.traced = tracedSteps(deps.tracing);
  }

  /** Whether a path is the core's to answer: the API and the probes; anything else (/metrics, /docs, /openapi.*) is not. */
  claims(path: string): boolean {
    return underApiRoot(this.spec, path) || this.outsideRoot.has(path.replace(/(.)\/+$/, '$1'));
  }

  /** One request, answered: never throws, every failure is its Error body. */
  async answer(request: ApiRequest): Promise<Answer> {
    const { path, query } = splitTarget(request.target);
    const spec: SpecRequest = {
      method: request.method === 'HEAD' ? 'GET' : request.method,
      path,
      query: parseQuery(query),
      headers: request.headers,
    };
    const at: InFlight = { request, spec, headers: {}, facts: {} };
    let found: Match | undefined;
    let reply: UnwrittenReply;
    try {
      found = this.match(spec);
      at.facts.operationId = found.route?.facts.operationId;
      at.facts.route = found.route && found.operation.path;
      reply = await this.steps(at, found);
    } catch (err) {
      reply = this.failure(at, err);
    }
    // 9. The reply. Answers here depend on the caller and the moment: no cache may keep them.
    at.headers['Cache-Control'] = 'no-store';
    const route = found?.route;
    if (route) Object.assign(at.headers, route.facts.deprecationHeaders);
    const written = this.written(at, route, reply);
    // Answered: the request's token stays spent (a 304's went back in written()).
    const { quota } = at.facts;
    if (quota) this.deps.rateLimiter?.settle(quota.clientId, quota.decision);
    return { reply: written, facts: at.facts };
  }

  /** Steps 2 to 8 for one matched request; what they find for the log line goes into its facts as they find it. */
  private async steps(at: InFlight, found: Match): Promise<UnwrittenReply> {
    const { request, spec } = at;
    const deadline = requestDeadline(this.deps.deadlineMs);
    let key = request.caller;
    if (!key && this.needsKey(spec, found)) {
      const auth = this.deps.authenticate(request.headers, request.rawHeaders);
      // Returned, not thrown: the commonest refusal does not unwind.
      if (!auth.ok) {
        at.facts.keyId = auth.keyId;
        return replyOf(unauthorizedError(auth));
      }
      key = auth.key;
    }
    if (key) this.identify(at, key);
    if (!found.route) return this.unmatched(at, found);
    const { route } = found;
    if (key) {
      await this.takeQuota(at, key, deadline);
      if (!holdsScopes(key, route.facts.scopes)) return replyOf(insufficientScope(route.facts.operationId, route.facts.scopes[0] ?? []));
    }
    const body = route.facts.requestBodyType ? await this.traced('read body', () => this.readBody(at, route.facts)) : undefined;
    const coerced = this.validate(spec, found);
    // Returned, not thrown, as the 401 is: the commonest failure of a request that reached validation.
    if (coerced instanceof HttpError) return replyOf(coerced);
    const input = {
      query: coerced.query,
      path: coerced.params,
      body: spec.body,
      header: route.headerParams(request.headers),
      requestPath: spec.path,
      headers: request.headers,
      caller: key && { keyId: key.keyId, clientId: key.clientId },
      bodyFingerprint: () => (body && body.bytes.length > 0 ? hash('sha256', body.bytes, 'hex') : undefined),
      deadline,
    };
    const handled = await this.traced(route.handlerSpan, () => route.handler(input as unknown as Input<OperationId>));
    return this.checked(at, found.operation, handled);
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

  /** 2. Who called, for the log line and the metrics; and when the key expires, on every answer from here on. */
  private identify({ headers, facts }: InFlight, key: AuthenticatedKey): void {
    facts.keyId = key.keyId;
    facts.client = key.client;
    if (key.expiresHeader !== undefined) headers['API-Key-Expiration'] = key.expiresHeader;
  }

  /** 3. No operation: 404, or the path's methods (405, and OPTIONS's answer, RFC 9110 §9.3.7). */
  private unmatched({ request, spec, facts }: InFlight, found: Unmatched): UnwrittenReply {
    const allowed = found.allowed();
    if (!allowed) throw new HttpError(404, 'not_found', `No route ${request.method} ${spec.path}`);
    facts.route = allowed.template;
    const allow = allowed.allow.join(', ');
    if (request.method === 'OPTIONS') return { status: 204, headers: { Allow: allow } };
    throw new HttpError(405, 'method_not_allowed', `${request.method} is not allowed here; allowed: ${allow}`, { Allow: allow });
  }

  /** 4. The quota of the caller's client: its headers on every answer from here on, and 429 when it is spent. */
  private async takeQuota({ headers, facts }: InFlight, key: AuthenticatedKey, deadline: Deadline): Promise<void> {
    if (!this.deps.rateLimiter) return;
    const decision = await this.deps.rateLimiter.take(key.clientId, deadline);
    facts.quota = { clientId: key.clientId, decision };
    Object.assign(headers, rateLimitHeaders(decision));
    if (!decision.allowed) throw rateLimited(decision);
  }

  /** 5. The body, read once when the operation takes one; only a JSON document of the right type goes on to validation. */
  private async readBody({ request, spec }: InFlight, facts: OperationFacts): Promise<DecodedBody | undefined> {
    if (!facts.requestBodyType) return undefined;
    const body = await readJsonBody(request.headers, request.body, facts.requestMediaTypes);
    if (body?.value !== undefined) requireBodyType(body.value, facts.requestBodyType);
    spec.body = body?.value;
    return body;
  }

  /**
   * 6. The spec's validators and the integer-text check: one 400 naming each field that failed;
   * else ajv's coerced copy of the parameters, the spec's defaults applied (typed `any` by the library).
   */
  private validate(request: SpecRequest, { route, operation }: Matched): { query: unknown; params: unknown } | HttpError {
    const result = this.backend.validateRequest(request as never, operation);
    // ajv's coercion turned validation's copy of the path parameters into numbers: their text is the router's parse of the path.
    const pathParams: Record<string, unknown> = route.integerPathParams
      ? (this.backend.router.parseRequest(request as never, operation).params as Record<string, unknown>)
      : {};
    const raw = rawIntegerErrors(route.facts, request.query, pathParams);
    if (result.valid && raw.length === 0) return result.coerced as { query: unknown; params: unknown };
    const others = (result.errors ?? []).filter((e) => !raw.some((r) => r.instancePath === e.instancePath));
    const failed = [...raw, ...others];
    return new HttpError(400, 'validation_failed', describeErrors(failed), {}, fieldErrorsOf(failed, route.facts.headerParams));
  }

  /** 8. A reply the spec does not allow: reported, and under enforce the generic 500 (the violation is the logged cause). */
  private checked({ request }: InFlight, operation: Operation, reply: UnwrittenReply): UnwrittenReply {
    const violation = this.checkReply?.(operation, reply.status, reply.body);
    if (!violation) return reply;
    this.deps.onReplyViolation?.(violation, request.requestId);
    if (this.deps.validateResponses === 'enforce') throw violation;
    return reply;
  }

  /** 9. The reply's body written by its operation's serialiser, its headers over those the steps set. */
  private written(at: InFlight, route: Route | undefined, reply: UnwrittenReply): WrittenReply {
    const operationId = route?.facts.operationId;
    let text: string;
    try {
      text = reply.body === undefined ? '' : this.serialisers.forReply(operationId, reply.status)(reply.body);
    } catch (err) {
      // A body its schema cannot write (a required property missing, a value not of its type): the generic 500, the cause logged.
      const failed = this.failure(at, err);
      return jsonReply(
        failed.status,
        this.serialisers.forReply(operationId, failed.status)(failed.body),
        Object.assign(at.headers, failed.headers),
      );
    }
    const headers = Object.assign(at.headers, reply.headers);
    if (reply.body === undefined) return { status: reply.status, headers };
    if (route?.facts.conditional && reply.status === 200) return this.conditional(at, reply.status, text, headers);
    return jsonReply(reply.status, text, headers);
  }

  /**
   * 9, for an operation whose spec documents 304: the 200's strong ETag from the bytes it sends,
   * `Cache-Control: private, no-cache`, and 304 with no body when `If-None-Match` names the tag.
   * The 304 is decided after the key, the scope and the read, as a 200 would be; its request is
   * given back to the rate limit, and its `RateLimit` says so.
   */
  private conditional(at: InFlight, status: number, text: string, headers: Record<string, string>): WrittenReply {
    // Encoded once: the tag is taken over these bytes, and the listener sends them (the text, as
    // fast-json-stringify builds it, is a rope that each reading of it would flatten and encode again).
    const bytes = Buffer.from(text);
    headers.ETag = entityTag(bytes, headers.Link);
    headers['Cache-Control'] = CONDITIONAL_CACHE_CONTROL;
    if (!matchesTag(at.request.headers['if-none-match'], headers.ETag)) return jsonReply(status, text, headers, bytes);
    const { quota } = at.facts;
    if (quota && this.deps.rateLimiter)
      Object.assign(headers, rateLimitHeaders(this.deps.rateLimiter.refund(quota.clientId, quota.decision)));
    return { status: 304, headers };
  }

  /** A failure as its Error body, its cause kept for the log line. */
  private failure(at: InFlight, err: unknown): UnwrittenReply {
    const failure = toHttpError(err);
    keepCause(at.facts, failure, err);
    return replyOf(failure);
  }
}
