/**
 * When and how the client tries a request again. Only what cannot do harm twice is retried:
 * a safe method (GET, HEAD, OPTIONS), or a request carrying an `Idempotency-Key` (the server
 * replays the first answer instead of acting twice). Any request, keyed or not, is retried
 * after a 429 or a 503: the server promises that neither did anything.
 */
import { networkError } from './errors';

export interface RetryPolicy {
  /** Attempts in all, the first included (default 4; 1 turns retries off). */
  maxAttempts: number;
  /** The time every attempt and wait of one call may take together, in ms (default 30 000). */
  budgetMs: number;
  /** How long one attempt may take before it is abandoned (and retried), in ms (default 10 000). */
  attemptTimeoutMs: number;
  /** The backoff's first ceiling, in ms (default 200): each retry waits a random time up to `baseDelayMs · 2^(retry−1)`. */
  baseDelayMs: number;
  /** The backoff's largest ceiling, in ms (default 5 000). */
  maxDelayMs: number;
  /** The longest `Retry-After` the client waits for, in ms (default 60 000); a longer one ends the retries. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 4,
  budgetMs: 30_000,
  attemptTimeoutMs: 10_000,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 60_000,
});

/** A retry about to wait: which attempt failed, how it ended (its status; undefined: no answer), and the wait chosen before the next. */
export interface RetryEvent {
  attempt: number;
  status: number | undefined;
  waitMs: number;
}

/** Statuses after which a request that may be repeated is tried again. */
const RETRIED = new Set([429, 502, 503, 504]);
/** Statuses that promise nothing happened (rate limited before any work; "503 means nothing happened"). */
const NOTHING_HAPPENED = new Set([429, 503]);

/** How many attempts a response took, and the URL it answered: read by the client to report them. */
const facts = new WeakMap<Response, { attempts: number; url: string }>();
export const attemptsFor = (response: Response): number => facts.get(response)?.attempts ?? 1;
export const urlOf = (response: Response): string => facts.get(response)?.url ?? response.url;

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * The whole answer, read within the attempt: a connection lost in the middle of a body is a
 * failed attempt (and retried as one), not a failure after the call was settled.
 */
async function readWhole(answer: Response): Promise<Response> {
  const body = await answer.arrayBuffer();
  const { status, statusText, headers } = answer;
  return new Response(NULL_BODY.has(status) ? null : body, { status, statusText, headers });
}

/**
 * `Retry-After` in ms (RFC 9110 §10.2.3: delay-seconds or an HTTP date), or undefined when
 * absent or unreadable.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Each of the HTTP date's three forms (RFC 9110 §5.6.7) begins with the day's name.
  const at = /^[A-Za-z]{3}/.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Full jitter (a random wait between 0 and the exponential ceiling). */
const backoff = (policy: RetryPolicy, retry: number): number =>
  Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));

/** Waits `ms`, or until the caller aborts (then throws the abort's reason, as fetch does). */
async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
  signal.throwIfAborted();
}

/** Whether this request may be sent again after `status` (undefined: no response at all). */
function mayRepeat(request: Request, status: number | undefined): boolean {
  if (status !== undefined && NOTHING_HAPPENED.has(status)) return true;
  const repeatable = ['GET', 'HEAD', 'OPTIONS'].includes(request.method) || request.headers.has('idempotency-key');
  if (!repeatable) return false;
  // 409 on a keyed request: the first attempt with this key is still being processed (its answer
  // may have been lost on the way): waiting and asking again gets its replay.
  if (status === 409) return request.headers.has('idempotency-key');
  return status === undefined || RETRIED.has(status);
}

/**
 * A fetch that sends each request until it gets an answer it should keep, within the policy:
 * every attempt is the same request (the same body, the same `Idempotency-Key`), a caller's
 * abort ends it at once, and running out of attempts or time gives the last answer, or an
 * AnimalStoreError when no attempt got one.
 */
export function retryingFetch(
  policy: RetryPolicy,
  send: typeof fetch,
  onRetry?: (retry: RetryEvent) => void,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const started = Date.now();
    const caller = request.signal;
    const body = request.body ? await request.arrayBuffer() : undefined;
    for (let attempt = 1; ; attempt += 1) {
      const left = policy.budgetMs - (Date.now() - started);
      const timeout = AbortSignal.timeout(Math.max(1, Math.min(policy.attemptTimeoutMs, left)));
      const signal = AbortSignal.any([caller, timeout]);
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await readWhole(await send(new Request(request, { body, signal })));
      } catch (err) {
        if (caller.aborted) throw caller.reason;
        failure = err;
      }
      let wait: number | undefined;
      if (attempt < policy.maxAttempts && mayRepeat(request, response?.status)) {
        const after = response && retryAfterMs(response.headers.get('retry-after'));
        if (after === undefined) wait = backoff(policy, attempt);
        else if (after <= policy.maxRetryAfterMs) wait = after;
        if (wait !== undefined && Date.now() - started + wait >= policy.budgetMs) wait = undefined;
      }
      if (wait === undefined) {
        if (response) {
          facts.set(response, { attempts: attempt, url: request.url });
          return response;
        }
        throw networkError(request, failure, attempt, timeout.aborted);
      }
      onRetry?.({ attempt, status: response?.status, waitMs: wait });
      await sleep(wait, caller);
    }
  };
}
