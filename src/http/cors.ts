import cors from 'cors';

/** What a browser on an allowed origin may send besides the CORS-safelisted headers. */
export const CORS_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-None-Match'];

/** The response headers a script on an allowed origin may read: every header the contract gives meaning to. */
export const CORS_EXPOSED_HEADERS = [
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Link',
  'ETag',
  'Idempotent-Replayed',
  'X-Request-Id',
  'WWW-Authenticate',
  'API-Key-Expiration',
  'Accept-Encoding',
];

/** The `cors` package's handler: Node's request and response, and what runs next (express's middleware signature). */
export type CorsHandler = ReturnType<typeof cors>;

/**
 * CORS for web applications on other origins (CORS_ORIGINS), by the `cors` package. A request
 * from an origin not listed gets no CORS headers at all, so the browser keeps its script from
 * the response; its preflight goes on to the request core, which answers OPTIONS with `Allow` only.
 * A preflight from a listed origin is answered here, without a key, like any OPTIONS.
 */
export function corsMiddleware(origins: readonly string[] | '*', methods: readonly string[]): CorsHandler {
  const listed = new Set(origins === '*' ? [] : origins);
  return cors({
    origin: origins === '*' ? '*' : (origin, callback) => callback(null, origin !== undefined && listed.has(origin) ? origin : false),
    methods: [...methods],
    allowedHeaders: CORS_REQUEST_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    // Browsers cap it (Chromium at 2 hours); 10 minutes keeps a changed list from lingering.
    maxAge: 600,
  });
}
