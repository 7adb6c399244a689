import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Express } from 'express';
import { type RequestRecorder, recordResponse, setEveryResponseHeaders, withEveryResponseHeaders } from '../ops/requestLog';
import { withinSpan } from '../ops/tracing';
import type { CorsHandler } from './cors';
import { type RequestCore, splitTarget } from './core';
import { streamedBody } from './body';
import { closeIfBodyLeft } from './connection';
import { hostProblem, refuseHost } from './host';
import { replyToFault } from './reply';

export interface ListenerDeps {
  core: RequestCore;
  /** The app's record of requests: every request's id, nosniff, log line, metrics and span. */
  record: RequestRecorder;
  /** CORS_ORIGINS' handler, when it is set: run before the core. */
  cors?: CorsHandler;
  /** MCP_ENABLED: the door of /mcp (mcp/endpoint.ts), handed every request whose path is `path` exactly. */
  mcp?: { path: string; door: (req: IncomingMessage, res: ServerResponse, locals: Locals) => void };
  /** Everything else: the express app (/metrics, the contract, the 404s). */
  rest: Express;
}

/**
 * What a server serves (`createHttpServer`): one listener, and the prototypes its requests and
 * responses are to be born with (express's `app.request` and `app.response`, which express gives
 * them on the requests it answers: born with them, it changes nothing).
 */
export interface App {
  (req: IncomingMessage, res: ServerResponse): void;
  readonly prototypes: { request: object; response: object };
}

/** An app served by `listener`, its requests born with `rest`'s prototypes (express answers some of them). */
export const served = (rest: Express, listener: (req: IncomingMessage, res: ServerResponse) => void = rest): App =>
  Object.assign((req: IncomingMessage, res: ServerResponse) => listener(req, res), {
    prototypes: { request: rest.request, response: rest.response },
  });

/** A request's facts as express's routes find them (`res.locals`): what its log line reports, and its id. */
type Locals = Express.Locals;

/**
 * The one listener of the API's server. Every request first gets its id and its record
 * (`recordResponse`), and one valid Host (`hostProblem`). Then a request for the API or a probe
 * (`core.claims`) goes through CORS to the request core, whose reply is written in one call with
 * every response's headers among its own; one for /mcp goes to its door (MCP_ENABLED) with the
 * request's facts; anything else goes to `rest`, the express app, with the request's facts as its
 * `res.locals` (express keeps a `res.locals` it finds, as it does for a mounted app), where its
 * routes leave what they learn for the log line. A response written header by header (by express,
 * CORS, a refusal or a fault) gets every response's headers first.
 */
export function apiListener({ core, record, cors, mcp, rest }: ListenerDeps): RequestListener {
  const fault = (req: IncomingMessage, res: ServerResponse, locals: Locals, err: unknown) => {
    if (!res.headersSent) setEveryResponseHeaders(res, locals.requestId);
    if (!replyToFault(req, res, locals, err)) res.destroy();
  };
  const answer = (req: IncomingMessage, res: ServerResponse, locals: Locals) => {
    answerByCore(core, req, res, locals).catch((err: unknown) => fault(req, res, locals, err));
  };
  return (req, res) => {
    const locals = {} as Locals;
    const { requestId, span } = recordResponse(record, req, res, locals);
    locals.requestId = requestId;
    const steps = () => {
      // A failure of a step is answered as express would answer it: the Error body.
      try {
        const problem = hostProblem(req);
        if (problem !== undefined) {
          setEveryResponseHeaders(res, requestId);
          return refuseHost(res, problem);
        }
        const { path } = splitTarget(req.url ?? '');
        if (path === mcp?.path) return mcp.door(req, res, locals);
        if (!core.claims(path)) {
          setEveryResponseHeaders(res, requestId);
          (res as ServerResponse & { locals: Locals }).locals = locals;
          rest(req, res);
          return;
        }
        if (!cors) return answer(req, res, locals);
        setEveryResponseHeaders(res, requestId);
        // As express reads a middleware's `next(err)`: anything falsy (the cors package passes null) goes on.
        cors(req, res, (err?: unknown) => (err ? fault(req, res, locals, err) : answer(req, res, locals)));
      } catch (err) {
        fault(req, res, locals, err);
      }
    };
    withinSpan(span, steps);
  };
}

/**
 * A request answered by the core: the request becomes a value (its body still on the socket), the
 * core's reply is written as it is, and what the answering learned goes to `locals` (the log line).
 */
async function answerByCore(core: RequestCore, req: IncomingMessage, res: ServerResponse, locals: Locals): Promise<void> {
  const { reply, facts } = await core.answer({
    method: req.method ?? '',
    target: req.url ?? '',
    headers: req.headers,
    rawHeaders: req.rawHeaders,
    requestId: locals.requestId,
    body: streamedBody(req),
  });
  Object.assign(locals, facts);
  // Answered before the body was read (a 401, a 413): the connection may have to close after it.
  closeIfBodyLeft(req, res);
  // One call with every header, as Node's writeHead takes them when none was set before: no header is
  // stored one by one to be written out afterwards. (Set before, by CORS or by closeIfBodyLeft, they are merged.)
  res.writeHead(reply.status, withEveryResponseHeaders(reply.headers, locals.requestId));
  res.end(reply.bytes ?? reply.body);
}
