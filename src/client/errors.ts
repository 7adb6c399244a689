import type { components } from '../../generated/openapi';

type ErrorBody = components['schemas']['Error'];
/** The codes of failures the client saw without an Error body from the API. */
export type ClientErrorCode = 'network_error' | 'timeout' | 'unexpected_response';

/** What the response headers say beyond the body: the ones a caller acts on. */
export interface ResponseMeta {
  /** `X-Request-Id`: quote it when asking the API's operators about this call. */
  requestId?: string;
  /** `RateLimit` and `RateLimit-Policy` as sent (IETF httpapi RateLimit headers). */
  rateLimit?: string;
  rateLimitPolicy?: string;
  /** `API-Key-Expiration`: when the key this call was made with stops working (make its successor before). */
  apiKeyExpiration?: Date;
  /** How many attempts the call took (1 when the first answer was kept). */
  attempts: number;
}

export function metaOf(response: Response, attempts: number): ResponseMeta {
  const header = (name: string) => response.headers.get(name) ?? undefined;
  const expires = header('api-key-expiration');
  return {
    requestId: header('x-request-id'),
    rateLimit: header('ratelimit'),
    rateLimitPolicy: header('ratelimit-policy'),
    apiKeyExpiration: expires === undefined ? undefined : new Date(expires),
    attempts,
  };
}

/**
 * Every failed call: the API's Error body (`code`, `message`, `status`), the headers that
 * matter, and how many attempts were made. A call that got no answer at all (the network
 * failed, or each attempt ran out of time) has `status` 0 and `code` `network_error` or
 * `timeout`; an answer that is not an Error body (a proxy's page) has `code` `unexpected_response`.
 * A create's error carries its `idempotencyKey`: calling createPet again with it tells whether
 * the animal was made (its replay) or makes it once.
 */
export class AnimalStoreError extends Error {
  readonly code: ErrorBody['code'] | ClientErrorCode;
  readonly status: number;
  /** The API's Error body; undefined when the failure was not an answer of the API. */
  readonly body?: ErrorBody;
  /** `Retry-After` in seconds, when the answer had one. */
  readonly retryAfter?: number;
  readonly meta: ResponseMeta;
  idempotencyKey?: string;

  constructor(
    what: { code: ErrorBody['code'] | ClientErrorCode; message: string; status: number },
    meta: ResponseMeta,
    options: { body?: ErrorBody; retryAfter?: number; cause?: unknown } = {},
  ) {
    super(`${what.status} ${what.code}: ${what.message}`, { cause: options.cause });
    this.name = 'AnimalStoreError';
    this.code = what.code;
    this.status = what.status;
    this.body = options.body;
    this.retryAfter = options.retryAfter;
    this.meta = meta;
  }
}

const isErrorBody = (value: unknown): value is ErrorBody => {
  const v = value as Partial<ErrorBody> | null;
  return typeof v?.code === 'string' && typeof v.message === 'string' && typeof v.status === 'number';
};

/** The error for an answer that is not a success (`parsed`: its body as openapi-fetch read it). */
export function errorFrom(parsed: unknown, response: Response, attempts: number): AnimalStoreError {
  const body = isErrorBody(parsed) ? parsed : undefined;
  const what = body ?? { code: 'unexpected_response', message: `HTTP ${response.status} without an Error body`, status: response.status };
  const retryAfter = response.headers.get('retry-after');
  return new AnimalStoreError(what, metaOf(response, attempts), {
    body,
    retryAfter: retryAfter !== null && /^\s*\d+\s*$/.test(retryAfter) ? Number(retryAfter) : undefined,
  });
}

/** The error for a call whose every attempt failed without an answer. */
export function networkError(request: Request, cause: unknown, attempts: number, timedOut: boolean): AnimalStoreError {
  const what = timedOut ? 'timeout' : 'network_error';
  const message = `${request.method} ${request.url} got no answer in ${attempts} attempt${attempts === 1 ? '' : 's'} (${timedOut ? 'timed out' : String((cause as Error)?.message ?? cause)})`;
  return new AnimalStoreError({ code: what, message, status: 0 }, { attempts }, { cause });
}
