/**
 * What the bench's contestants (baselines.ts, alternatives.ts, fastify.ts, and their store,
 * plainStore.ts) take from the product, each piece on purpose. Nothing else of src/ is imported by
 * a contestant: every other line of theirs is written as its own library's documentation shows,
 * so that no ratio cancels one of the product's costs out (architecture's trap: a benchmark whose
 * alternatives call our own code measures our code twice).
 */

// The contract itself: every contestant serves the same document, and reads its deprecation
// headers and scopes from it rather than copying them.
export { specPath } from '../../src/paths';
export { type Spec, deprecatedOperations } from '../../src/contract/spec';

// The signed page cursor: the contract promises cursors that are opaque and checked. A contestant
// that kept that promise its own way would page differently, and the bench test could not compare
// its `Link` with the product's to the byte; the codec is a few lines of HMAC either way.
export { createCursorCodec } from '../../src/store/pets/cursors';
export { InvalidCursorError } from '../../src/store/errors';
export type { PetFilter, PetPage } from '../../src/store/pets/store';

// The bearer check: constant-time comparison of digests. A cheaper (unsafe) comparison would
// measure a weaker server, not a faster design.
export { createAuthenticator, unauthorizedError } from '../../src/http/auth';

// The body's rules: 16 KiB, and JSON decoded exactly (JSON.parse alone rounds integers past
// 2^53 − 1, which the contract refuses). The baselines keep them; the alternatives use their
// libraries' parsers with the same size limit.
export { BODY_LIMIT_BYTES, readJsonBody, streamedBody } from '../../src/http/body';
export { parseJsonExactly } from '../../src/http/exactJson';

// The Error bodies: every contestant answers a failure with the same bytes, so that the bench
// test can hold each answer against the product's.
export { HttpError, bodyOf, toHttpError } from '../../src/http/errors';
export { errorMiddleware, sendError } from '../../src/http/reply';

// The production features of the `express` floor (serve.ts express, for A/B runs of them): the
// product's own log line, metrics and rate limiter, to measure exactly what they cost.
export { createRequestRecorder, requestLog } from '../../src/ops/requestLog';
export type { Logging } from '../../src/ops/logger';
export { createMetrics } from '../../src/ops/metrics';
export { queriesInFlight } from '../../src/store/database/db';
export { rateLimitHeaders, rateLimited } from '../../src/http/rateLimit';
export type { RateLimiter } from '../../src/store/rateLimits';
export { type Deadline, requestDeadline } from '../../src/store/database/deadline';
