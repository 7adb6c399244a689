import type { RateDecision } from '../store/rateLimits';
import { HttpError } from './errors';

/** draft-ietf-httpapi-ratelimit-headers: the policy, and what is left of it. Sent on every counted request. */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    'RateLimit-Policy': `"per-key";q=${d.limit};w=${d.windowSeconds}`,
    RateLimit: `"per-key";r=${d.remaining};t=${d.resetSeconds}`,
  };
}

/** The 429 for a request over its key's limit; `Retry-After` names the same moment as `RateLimit`'s `t`. */
export function rateLimited(d: RateDecision): HttpError {
  return new HttpError(
    429,
    'rate_limited',
    `This API key's client made ${d.limit} requests in ${d.windowSeconds} s, its limit; retry in ${d.resetSeconds} s`,
    {
      'Retry-After': String(d.resetSeconds),
    },
  );
}
