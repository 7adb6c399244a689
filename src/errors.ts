import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Response } from 'express';
import type { components } from '../generated/openapi';

export type ErrorBody = components['schemas']['Error'];
export type ErrorCode = ErrorBody['code'];

/** A failure with a known meaning: becomes the Error body with this status and code. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    // An answer, not a fault: no stack to capture (capturing one on every 400/401/404 is costly).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'HttpError';
  }
}

const RETRY_AFTER_SECONDS = 1;

export function serviceUnavailable(message = 'The database is unavailable; retry shortly'): HttpError {
  return new HttpError(503, 'service_unavailable', message, {
    'Retry-After': String(RETRY_AFTER_SECONDS),
  });
}

// Connection-level failures (postgres.js codes and Node socket errors) and the
// SQLSTATEs PostgreSQL uses when it cannot serve right now: the request may be
// retried, so these are 503, not 500.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '57014', // query_canceled (statement_timeout)
  '53300', // too_many_connections
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  // SQLSTATE class 08: connection exception.
  return UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}

/**
 * The one mapping from anything thrown to an HttpError. Unknown errors become 500 with a
 * generic message: the details go to the request's log line (see sendError), never to the client.
 */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (isDatabaseUnavailable(err)) return serviceUnavailable();
  // decodeURIComponent on a path segment with broken percent-encoding.
  if (err instanceof URIError) return new HttpError(400, 'validation_failed', 'The request path has malformed percent-encoding');
  // Errors raised by express's body reading (http-errors) carry `type` and `status`.
  const e = err as { type?: unknown; message?: unknown };
  switch (e?.type) {
    case 'entity.too.large':
      return new HttpError(413, 'payload_too_large', `The request body exceeds ${String((err as { limit?: number }).limit)} bytes`);
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new HttpError(415, 'unsupported_media_type', String(e.message));
    case 'request.aborted':
    case 'request.size.invalid':
      return new HttpError(400, 'validation_failed', 'The request body was incomplete');
  }
  return new HttpError(500, 'internal_error', 'An unexpected error occurred');
}

/** A 5xx keeps its cause on the response, where the request log line (src/middleware.ts) records it with its stack, once. */
export function keepCause(res: Response, failure: HttpError, cause: unknown): void {
  if (failure.status >= 500 && cause !== failure) (res as Response & { err?: Error }).err = cause as Error;
}

export const errorBody = (err: HttpError): ErrorBody => ({ code: err.code, message: err.message, status: err.status });

/**
 * Writes a JSON response with Node's own methods: what express's res.status().set().json()
 * sends (the same headers, UTF-8 charset, Content-Length, no body for HEAD) without its
 * per-response content-type negotiation and conversions, which cost a measurable share of a request.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string>>): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  if (headers) for (const name in headers) res.setHeader(name, headers[name]);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

export function sendError(res: ServerResponse, err: HttpError): void {
  sendJson(res, err.status, errorBody(err), err.headers);
}

/** express's last middleware: whatever escaped the routes leaves as the Error body. */
export const errorMiddleware: ErrorRequestHandler = (err, _req, res, next) => {
  if (res.headersSent) return next(err);
  const failure = toHttpError(err);
  keepCause(res, failure, err);
  sendError(res, failure);
};
