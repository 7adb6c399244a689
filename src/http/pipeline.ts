/**
 * The request pipeline: one API request from express to its reply, in the order it happens.
 *
 *   1. key         the bearer key, before anything else under the API root (401)
 *   2. match       the request matched against the spec, once, by openapi-backend (404, 405, OPTIONS)
 *   3. rate limit  the caller's quota (429)
 *   4. body        read and decoded once (413, 415, 400)
 *   5. validate    openapi-backend's ajv validators: parameters and body against the spec (400)
 *   6. handler     the operation's handler: input in, reply out
 *   6b. contract   VALIDATE_RESPONSES=log|enforce: the reply checked against the spec (logged; 500 under enforce)
 *   7. reply       the reply, or the Error body of whatever failed, with the headers the match calls for
 *
 * openapi-backend is used through its public API: handlers registered by operationId, hooks
 * (postSecurityHandler, and postResponseHandler when replies are checked), failure handlers
 * (notFound, methodNotAllowed, unauthorizedHandler, validationFail), handleRequest, and its
 * router's matchOperation for failures before it.
 */
import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorObject } from 'ajv';
import type { Request, RequestHandler, Response } from 'express';
import type OpenAPIBackend from 'openapi-backend';
import type { Context } from 'openapi-backend';
import { allowedMethods } from '../contract/backend';
import { type OperationFacts, type Spec, keyFirst, underApiRoot } from '../contract/spec';
import { type ReplyContractError, type ResponseValidation, createReplyCheck } from '../contract/replies';
import { describeErrors, rawIntegerErrors } from '../contract/validation';
import type { HandlerMap, Input, OperationId, Reply as HandlerReply } from '../handlers/types';
import { type Deadline, requestDeadline } from '../store/deadline';
import type { RateLimiter } from '../store/rateLimits';
import { type AuthResult, createBearerAuth, unauthorizedError } from './auth';
import { type DecodedBody, readJsonBody, requireBodyType } from './body';
import { closeIfBodyLeft } from './connection';
import { HttpError, errorBody, keepCause, sendJson, toHttpError } from './errors';
import { rateLimitHeaders, rateLimited } from './rateLimit';

export interface PipelineDeps {
  spec: Spec;
  /** openapi-backend for the spec, initialised (src/contract/backend.ts); the pipeline registers its handlers. */
  backend: OpenAPIBackend;
  handlers: HandlerMap;
  apiKeys: readonly string[];
  /** Counts requests per API key; absent: no limit. */
  rateLimiter?: RateLimiter;
  /** How long a request's database work may take (default QUERY_DEADLINE_MS); tests shorten it. */
  deadlineMs?: number;
  /** Check each handler's reply against the spec (default off); a violation is reported, and under enforce answered with 500. */
  validateResponses?: ResponseValidation;
  onReplyViolation?: (violation: ReplyContractError, res: Response) => void;
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Readonly<Record<string, string>>;
}

/** What openapi-backend is given of a request: the body once it is decoded, as a value. */
interface LibraryRequest {
  method: string;
  path: string;
  query: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  body?: unknown;
}

/** One request on its way through the pipeline: what each step found, for the steps after it. */
interface Call {
  req: Request;
  res: Response;
  request: LibraryRequest;
  deadline: Deadline;
  auth?: AuthResult;
  /** The operation the request matched, and the path template it matched. */
  operation?: OperationFacts;
  route?: string;
  body?: DecodedBody;
  /** Integer parameters not written as plain decimal digits, which ajv's coercion would accept. */
  rawErrors?: ErrorObject[];
}

/** The library found no operation and the path is outside the API root: the express routes after the pipeline answer it. */
const NOT_THE_API = Symbol('not the API');

const replyOf = (err: HttpError): Reply => ({ status: err.status, body: errorBody(err), headers: err.headers });

export function createApiPipeline({
  spec,
  backend,
  handlers,
  apiKeys,
  rateLimiter,
  deadlineMs,
  validateResponses = 'off',
  onReplyViolation,
}: PipelineDeps): RequestHandler {
  const authenticate = createBearerAuth(apiKeys);
  const facts = spec.operations;
  // Header parameters by their names in the spec, as the generated types name them (Node gives them in lower case).
  const headerParams = new Map(
    [...facts.values()].map((op) => [op.operationId, op.headerParams.map((name) => [name, name.toLowerCase()] as const)]),
  );

  /** The operation a request matched and its template, for the steps after the match. */
  const recordMatch = (call: Call, op: { operationId?: string; path: string } | undefined) => {
    call.operation = op && facts.get(op.operationId ?? '');
    call.route = op?.path;
  };

  /** Under the API root nothing is answered without a valid key: not a 404, a 405 or a 400 (keyless paths apart). */
  const requireKey = (call: Call) => {
    if (!keyFirst(spec, call.request.path)) return;
    call.auth ??= authenticate(call.req.headers, call.req.rawHeaders);
    if (!call.auth.ok) throw unauthorizedError(call.auth);
  };

  // 2. The match runs inside handleRequest; postSecurityHandler (below) records it. Nothing matched:
  backend.register('notFound', (_c: Context, call: Call) => {
    if (!underApiRoot(spec, call.request.path)) return NOT_THE_API;
    requireKey(call);
    throw new HttpError(404, 'not_found', `No route ${call.req.method} ${call.request.path}`);
  });
  // Known path, other method: not the hot path, so the path's methods are looked up here, with the library's router.
  backend.register('methodNotAllowed', (_c: Context, call: Call): Reply => {
    const found = allowedMethods(backend, call.request.path);
    call.route = found?.template;
    const allow = (found?.allow ?? []).join(', ');
    // OPTIONS: the methods this resource supports (RFC 9110 §9.3.7); no key needed, as the contract is public.
    if (call.req.method === 'OPTIONS') return { status: 204, headers: { Allow: allow } };
    requireKey(call);
    throw new HttpError(405, 'method_not_allowed', `${call.req.method} is not allowed here; allowed: ${allow}`, { Allow: allow });
  });

  // 1. The key, for operations that need one. Under the API root it was checked before handleRequest (below).
  backend.registerSecurityHandler('bearerAuth', (_c: Context, call: Call) => {
    call.auth ??= authenticate(call.req.headers, call.req.rawHeaders);
    return call.auth.ok;
  });
  backend.register('unauthorizedHandler', (_c: Context, call: Call): never => {
    if (call.auth?.ok !== false) throw new Error('unauthorizedHandler reached without a failed authentication');
    throw unauthorizedError(call.auth);
  });

  // After the match and the key, before validation: the match is recorded for the steps after it (deprecation
  // headers, the log line, the metrics); then 3 and 4, the quota is taken and the body read, for a caller that may proceed.
  backend.register('postSecurityHandler', async (c: Context, call: Call) => {
    recordMatch(call, c.operation);
    if (!c.security.authorized && (c.operation.security ?? []).length > 0) return;
    if (rateLimiter && call.auth?.ok) {
      const decision = await rateLimiter.take(call.auth.owner, call.deadline);
      const headers = rateLimitHeaders(decision);
      for (const name in headers) call.res.setHeader(name, headers[name] as string);
      if (!decision.allowed) throw rateLimited(decision);
    }
    const op = call.operation;
    if (op?.requestBodyType) {
      call.body = await readJsonBody(call.req, op.requestMediaTypes);
      // Only a JSON document reaches the library: it would decode a string body a second time.
      if (call.body?.value !== undefined) requireBodyType(call.body.value, op.requestBodyType);
      call.request.body = call.body?.value;
    }
    if (op) call.rawErrors = rawIntegerErrors(op, c.request.query as Record<string, unknown>, c.request.params as Record<string, unknown>);
  });

  // 5. Validation runs in handleRequest; its failures, with those of the integer check, are one 400 naming each field.
  // Returned, not thrown: the commonest failure does not unwind through the library's and the pipeline's awaits.
  backend.register('validationFail', (c: Context, call: Call): Reply => {
    const raw = call.rawErrors ?? [];
    const others = (c.validation.errors ?? []).filter((e) => !raw.some((r) => r.instancePath === e.instancePath));
    return replyOf(new HttpError(400, 'validation_failed', describeErrors([...raw, ...others])));
  });

  // 6. The handlers, given what the earlier steps found: ajv's coerced parameters (the spec's defaults applied) and the decoded body.
  for (const operationId of facts.keys() as Iterable<OperationId>) {
    const handler = handlers[operationId] as (input: Input<OperationId>) => Promise<HandlerReply<OperationId>>;
    const names = headerParams.get(operationId) ?? [];
    backend.register(operationId, (c: Context, call: Call) => {
      // Validation passed; the integer check may still refuse text that ajv's coercion accepted.
      if (call.rawErrors?.length) throw new HttpError(400, 'validation_failed', describeErrors(call.rawErrors));
      // ajv's coerced copy of the parameters (typed `any` by the library): the input types below say what it holds.
      const coerced = c.validation.coerced as { query: unknown; params: unknown };
      const header: Record<string, unknown> = {};
      for (const [name, lower] of names) if (call.req.headers[lower] !== undefined) header[name] = call.req.headers[lower];
      const input = {
        query: coerced.query,
        path: coerced.params,
        body: call.request.body,
        header,
        requestPath: call.request.path,
        headers: call.req.headers,
        caller: call.auth?.ok ? { keyId: call.auth.keyId, owner: call.auth.owner } : undefined,
        bodyFingerprint: () => (call.body && call.body.bytes.length > 0 ? hash('sha256', call.body.bytes, 'hex') : undefined),
        deadline: call.deadline,
      };
      return handler(input as unknown as Input<OperationId>);
    });
  }

  // 6b. Registered only when asked for: with it off, a reply costs nothing more.
  if (validateResponses !== 'off') {
    const checkReply = createReplyCheck(backend);
    backend.register('postResponseHandler', (c: Context, call: Call) => {
      const reply = c.response as Reply | typeof NOT_THE_API | undefined;
      // Only an operation's own reply (its handler runs only once validation passed): the failure handlers' (404, 405, OPTIONS) are the pipeline's.
      if (!c.operation || typeof reply !== 'object') return reply;
      const violation = checkReply(c.operation, reply.status, reply.body);
      if (!violation) return reply;
      onReplyViolation?.(violation, call.res);
      // enforce: the generic 500; the violation is the request's logged cause.
      if (validateResponses === 'enforce') throw violation;
      return reply;
    });
  }

  /**
   * The match of a request that failed before handleRequest recorded one (no key, or a path
   * the library could not parse): the operation's headers go on its failure too.
   */
  const matchOnFailure = (call: Call) => recordMatch(call, backend.router.matchOperation(call.request as never));

  const answer = async (call: Call): Promise<Reply | typeof NOT_THE_API> => {
    // 1. The key first: a request without one goes no further (OPTIONS is answered without one).
    if (call.req.method !== 'OPTIONS' && keyFirst(spec, call.request.path)) {
      call.auth = authenticate(call.req.headers, call.req.rawHeaders);
      if (!call.auth.ok) {
        matchOnFailure(call);
        return replyOf(unauthorizedError(call.auth));
      }
    }
    try {
      return (await backend.handleRequest(call.request as never, call)) as Reply | typeof NOT_THE_API;
    } catch (err) {
      // The library decodes path parameters between its match and postRoutingHandler: broken percent-encoding fails there.
      if (err instanceof URIError && call.route === undefined) matchOnFailure(call);
      throw err;
    }
  };

  return async (req, res, next) => {
    const call: Call = {
      req,
      res,
      // HEAD is answered as GET; Node sends the headers without the body.
      request: { method: req.method === 'HEAD' ? 'GET' : req.method, path: req.path, query: req.query, headers: req.headers },
      deadline: requestDeadline(deadlineMs),
    };
    let reply: Reply | typeof NOT_THE_API;
    try {
      reply = await answer(call);
    } catch (err) {
      const failure = toHttpError(err);
      keepCause(res, failure, err);
      reply = replyOf(failure);
    }
    if (reply === NOT_THE_API) return next();

    // 7. The reply, with what the match calls for.
    res.locals.operationId = call.operation?.operationId;
    res.locals.route = call.route;
    res.locals.keyId = call.auth?.ok ? call.auth.keyId : undefined;
    // Answers here depend on the caller and the moment: no cache may keep them.
    res.setHeader('Cache-Control', 'no-store');
    closeIfBodyLeft(req, res);
    const deprecation = call.operation?.deprecationHeaders;
    if (deprecation) for (const name in deprecation) res.setHeader(name, deprecation[name] as string);
    if (reply.body === undefined) {
      res.statusCode = reply.status;
      for (const name in reply.headers) res.setHeader(name, reply.headers[name] as string);
      res.end();
      return;
    }
    sendJson(res, reply.status, reply.body, reply.headers);
  };
}
