import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { type RequestFacts, type RequestRecorder, recordResponse } from '../ops/requestLog';
import type { CorsHandler } from './cors';
import { answerByCore } from './expressDoor';
import { hostProblem, refuseHost } from './host';
import { type RequestCore, splitTarget } from './pipeline';
import { replyToFault } from './reply';

export interface NodeDoorDeps {
  core: RequestCore;
  /** The app's record of requests: the same log line, metrics and span as express's door gives. */
  record: RequestRecorder;
  /** CORS_ORIGINS' handler, when it is set: run before the core, as it runs in express. */
  cors?: CorsHandler;
  /** Everything the core does not claim: the express app (/metrics, /mcp, the contract, the 404s). */
  rest: RequestListener;
}

/**
 * The server's own door to the request core. A request for the API or a probe (`core.claims`)
 * goes straight to the core, with every step express's chain gives it in the same order: the
 * request id, nosniff and its record (`recordResponse`), one valid Host (`hostProblem`), CORS,
 * then the core (`answerByCore`). Anything else goes to `rest`, the express app, unchanged.
 * express's router, its request decoration and its middleware chain do nothing the core needs;
 * they cost 6–13 µs of an API request (docs/performance.md, "The API door").
 */
export function nodeDoor({ core, record, cors, rest }: NodeDoorDeps): RequestListener {
  const answer = (req: IncomingMessage, res: ServerResponse, requestId: string, facts: RequestFacts) => {
    answerByCore(core, req, res, requestId, facts).catch((err: unknown) => {
      if (!replyToFault(req, res, facts, err)) res.destroy();
    });
  };
  return (req, res) => {
    if (!core.claims(splitTarget(req.url ?? '').path)) return rest(req, res);
    const facts: RequestFacts = {};
    const { requestId, span } = recordResponse(record, req, res, facts);
    const steps = () => {
      // What express would catch in its chain is answered as it would be: the Error body.
      try {
        const problem = hostProblem(req);
        if (problem !== undefined) return refuseHost(res, problem);
        if (!cors) return answer(req, res, requestId, facts);
        // As express reads a middleware's `next(err)`: anything falsy (the cors package passes null) goes on.
        cors(req, res, (err?: unknown) => (err ? replyToFault(req, res, facts, err) : answer(req, res, requestId, facts)));
      } catch (err) {
        if (!replyToFault(req, res, facts, err)) res.destroy();
      }
    };
    if (span) span.run(steps);
    else steps();
  };
}

/** The door each app's server is to use (`createApp` sets it; `createHttpServer` reads it). */
const doors = new WeakMap<object, RequestListener>();

/** Serves `app`'s API requests through `door` wherever the app is served by `createHttpServer`. */
export function setNodeDoor(app: object, door: RequestListener): void {
  doors.set(app, door);
}

/** What a server for `app` listens with: its node door when it has one, else the app itself. */
export function listenerOf(app: RequestListener): RequestListener {
  return doors.get(app) ?? app;
}
