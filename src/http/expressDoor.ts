import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { RequestFacts } from '../ops/requestLog';
import { streamedBody } from './body';
import { closeIfBodyLeft } from './connection';
import { type RequestCore, splitTarget } from './pipeline';

/**
 * A node request for the API or a probe, answered by the core: the request becomes a value (its
 * body still on the socket), the core's reply is written as it is, and what the answering learned
 * goes to `facts` (the request's log line). Both doors over Node's objects use it: express's and
 * the server's own (`nodeDoor.ts`).
 */
export async function answerByCore(
  core: RequestCore,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  facts: RequestFacts,
): Promise<void> {
  const { reply, facts: learned } = await core.answer({
    method: req.method ?? '',
    target: req.url ?? '',
    headers: req.headers,
    rawHeaders: req.rawHeaders,
    requestId,
    body: streamedBody(req),
  });
  Object.assign(facts, learned);
  // Answered before the body was read (a 401, a 413): the connection may have to close after it.
  closeIfBodyLeft(req, res);
  res.statusCode = reply.status;
  for (const name in reply.headers) res.setHeader(name, reply.headers[name] as string);
  res.end(reply.body);
}

/**
 * express's door to the request core (`answerByCore`), for an app served without the server's
 * own door (supertest given the app): the facts go to `res.locals`. Anything the core does not
 * claim goes on to express's routes.
 */
export function expressDoor(core: RequestCore): RequestHandler {
  return (req, res, next) => {
    if (!core.claims(splitTarget(req.url).path)) return next();
    return answerByCore(core, req, res, res.locals.requestId, res.locals);
  };
}
