import { type ErrorBody, type ErrorCode, type FieldError, errorBody } from '../contract/errorBody';
import { NotImplementedError } from '../contract/handlers';
import {
  DatabaseUnavailableError,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  InvalidCursorError,
  RefusedTargetError,
  TooManyEndpointsError,
  isDatabaseUnavailable,
} from '../store/errors';

/** A failure with a known meaning: becomes the Error body with this status and code (and a 400's failing fields, `errors`). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly errors?: readonly FieldError[],
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

/** The 4xx statuses a library may raise that the contract has a code for; any other is a 400 `bad_request`. */
const CLIENT_ERRORS: Record<number, [number, ErrorCode]> = {
  400: [400, 'bad_request'],
  404: [404, 'not_found'],
  405: [405, 'method_not_allowed'],
  408: [408, 'request_timeout'],
  413: [413, 'payload_too_large'],
  415: [415, 'unsupported_media_type'],
  431: [431, 'header_fields_too_large'],
};

/** A 400 about one field: its message is the field's sentence. */
export function invalidField(code: ErrorCode, field: FieldError, headers: Readonly<Record<string, string>> = {}): HttpError {
  return new HttpError(400, code, field.detail, headers, [field]);
}

export function serviceUnavailable(message = 'The database is unavailable; retry shortly'): HttpError {
  return new HttpError(503, 'service_unavailable', message, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
}

/**
 * The one mapping from anything thrown to an HttpError: a generated stub's 501, the store's domain errors, the body
 * reader's, and anything unknown, which becomes 500 with a generic message (the details go to
 * the request's log line through keepCause, never to the client).
 */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof NotImplementedError) return new HttpError(501, 'not_implemented', err.message);
  if (err instanceof IdempotencyKeyInUseError) return new HttpError(409, 'idempotency_key_in_use', err.message);
  if (err instanceof IdempotencyKeyReusedError) return new HttpError(422, 'idempotency_key_reused', err.message);
  if (err instanceof InvalidCursorError)
    return invalidField('validation_failed', {
      in: 'query',
      name: 'cursor',
      rule: err.issuedFor === undefined ? 'cursor' : 'cursorFilter',
      detail: `query parameter 'cursor' ${err.message}: follow the previous page's Link rel="next" as given`,
    });
  if (err instanceof RefusedTargetError)
    return invalidField('validation_failed', {
      in: 'body',
      pointer: '/url',
      rule: 'safeTarget',
      detail: `body property 'url' ${err.reason}`,
    });
  if (err instanceof TooManyEndpointsError)
    return invalidField('validation_failed', { in: 'body', pointer: '', rule: 'maxEndpoints', detail: err.message });
  if (err instanceof DatabaseUnavailableError) return serviceUnavailable(err.message);
  if (isDatabaseUnavailable(err)) return serviceUnavailable();
  // decodeURIComponent on a path segment with broken percent-encoding.
  if (err instanceof URIError)
    return invalidField('validation_failed', {
      in: 'path',
      rule: 'percentEncoding',
      detail: 'The request path has malformed percent-encoding',
    });
  // A library's refusal of the request (http-errors, as express and its body parsers raise them:
  // `status`, `statusCode` and `expose`): a 4xx with its message when it chose to expose it, as
  // the Error body; never a 500. Our own errors that carry a status (a reply that broke the
  // contract names the reply's) are not requests refused.
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown };
  if (typeof e?.status === 'number' && e.statusCode === e.status && typeof e.expose === 'boolean' && e.status >= 400 && e.status < 500) {
    const [status, code] = CLIENT_ERRORS[e.status] ?? [400, 'bad_request'];
    const message = e.expose === true && typeof e.message === 'string' ? e.message : 'The request was refused';
    // A library's 400 names no field: the request as a whole failed its rules.
    return status === 400 ? invalidField(code, { in: 'request', rule: 'http', detail: message }) : new HttpError(status, code, message);
  }
  return new HttpError(500, 'internal_error', 'An unexpected error occurred');
}

/**
 * A fault's cause, kept in the request's facts for its log line (`ops/requestLog.ts`), which
 * records it with its stack, once: every 5xx's, and a database failure's behind its 503.
 */
export function keepCause(facts: { err?: unknown }, failure: HttpError, cause: unknown): void {
  if (failure.status >= 500 && cause !== failure) facts.err = cause;
}

/** A failure's Error body. */
export const bodyOf = (err: HttpError): ErrorBody => errorBody(err.status, err.code, err.message, err.errors);
