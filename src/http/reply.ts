import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler } from 'express';
import { closeIfBodyLeft } from './connection';
import type { Serialise } from '../contract/serialisers';
import { type HttpError, bodyOf, keepCause, toHttpError } from './errors';

/**
 * What is sent back, as the wire has it: a status, a JSON body when there is one, and headers.
 * A handler's typed reply (`Reply<Op>`) is one of these.
 */
export interface WireReply {
  status: number;
  body?: unknown;
  headers?: Readonly<Record<string, string>>;
}

/** A failure as a reply: the Error body, with the failure's headers. */
export const replyOf = (err: HttpError): WireReply => ({ status: err.status, body: bodyOf(err), headers: err.headers });

/**
 * Writes a JSON response with Node's own methods: what express's res.status().set().json()
 * sends (the same headers, UTF-8 charset, Content-Length, no body for HEAD) without its
 * per-response content-type negotiation and conversions, which cost a measurable share of a request.
 * The body is written by `serialise` (the pipeline's come from the contract, ReplySerialisers)
 * before anything is set: one that throws leaves the response untouched.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Readonly<Record<string, string>>,
  serialise: Serialise = JSON.stringify,
): void {
  sendText(res, status, serialise(body), headers);
}

/** A JSON body already written as text (sendJson's second half). */
export function sendText(res: ServerResponse, status: number, text: string, headers?: Readonly<Record<string, string>>): void {
  res.statusCode = status;
  if (headers) for (const name in headers) res.setHeader(name, headers[name] as string);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** A reply as it is: JSON when it has a body, the status and headers alone when it has none. */
export function sendReply(res: ServerResponse, reply: WireReply, serialise?: Serialise): void {
  if (reply.body !== undefined) return sendJson(res, reply.status, reply.body, reply.headers, serialise);
  res.statusCode = reply.status;
  for (const name in reply.headers) res.setHeader(name, reply.headers[name] as string);
  res.end();
}

export function sendError(res: ServerResponse, err: HttpError): void {
  sendJson(res, err.status, bodyOf(err), err.headers);
}

/** express's last middleware: whatever escaped the routes leaves as the Error body. */
export const errorMiddleware: ErrorRequestHandler = (err, req, res, next) => {
  if (res.headersSent) return next(err);
  closeIfBodyLeft(req, res);
  const failure = toHttpError(err);
  keepCause(res.locals, failure, err);
  sendError(res, failure);
};
