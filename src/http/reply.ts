import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler } from 'express';
import { closeIfBodyLeft } from './connection';
import { type HttpError, bodyOf, keepCause, toHttpError } from './errors';

/**
 * What a handler or a step of the core answers, before its body is written: a status, a JSON body
 * when there is one, and headers. A handler's typed reply (`Reply<Op>`) is one of these.
 */
export interface UnwrittenReply {
  status: number;
  body?: unknown;
  headers?: Readonly<Record<string, string>>;
}

/** A failure as a reply: the Error body, with the failure's headers. */
export const replyOf = (err: HttpError): UnwrittenReply => ({ status: err.status, body: bodyOf(err), headers: err.headers });

/**
 * Writes an Error body with Node's own methods (the same headers express's res.json sends, UTF-8
 * charset, Content-Length, no body for HEAD) for what answers outside the request core: the Host
 * rule, /metrics and the other routes, /mcp's refusals, and express's last middleware.
 */
export function sendError(res: ServerResponse, err: HttpError): void {
  const text = JSON.stringify(bodyOf(err));
  res.statusCode = err.status;
  for (const name in err.headers) res.setHeader(name, err.headers[name] as string);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * What escaped a door's answering, as the Error body (a 500 unless it is a known failure), its
 * cause kept in `facts` for the log line; nothing when a response was already begun.
 */
export function replyToFault(req: IncomingMessage, res: ServerResponse, facts: { err?: unknown }, err: unknown): boolean {
  if (res.headersSent) return false;
  closeIfBodyLeft(req, res);
  const failure = toHttpError(err);
  keepCause(facts, failure, err);
  sendError(res, failure);
  return true;
}

/** express's last middleware: whatever escaped the routes leaves as the Error body. */
export const errorMiddleware: ErrorRequestHandler = (err, req, res, next) => {
  if (!replyToFault(req, res, res.locals, err)) next(err);
};
