import type { RequestHandler } from 'express';
import { streamedBody } from './body';
import { closeIfBodyLeft } from './connection';
import { type RequestCore, splitTarget } from './pipeline';

/**
 * express's door to the request core: a request for the API or a probe becomes a value (its
 * body still on the socket), the core's reply is written as it is, and its facts go to the
 * request's log line (`res.locals`). Anything else goes on to express's routes.
 */
export function expressDoor(core: RequestCore): RequestHandler {
  return async (req, res, next) => {
    if (!core.claims(splitTarget(req.url).path)) return next();
    const { reply, facts } = await core.answer({
      method: req.method,
      target: req.url,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      requestId: res.locals.requestId,
      body: streamedBody(req),
    });
    Object.assign(res.locals, facts);
    // Answered before the body was read (a 401, a 413): the connection may have to close after it.
    closeIfBodyLeft(req, res);
    res.statusCode = reply.status;
    for (const name in reply.headers) res.setHeader(name, reply.headers[name] as string);
    res.end(reply.body);
  };
}
