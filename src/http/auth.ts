import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { KeyRegistry } from '../store/keys/registry';
import { displayPrefix, keyDigest, parseKey } from '../store/keys/format';
import { HttpError, serviceUnavailable } from './errors';

/**
 * Who a valid key speaks for. `keyId` names the key in logs without revealing it (`asa_<id>`, or
 * for a bootstrap key (API_KEYS) `env:` and 16 hex digits of its SHA-256); `clientId` owns what the caller
 * stores and counts (Idempotency-Key records, rate-limit windows), so a rotated key keeps them;
 * `client` is the client's name in logs and metrics.
 */
export interface AuthenticatedKey {
  keyId: string;
  clientId: string;
  client: string;
  scopes: ReadonlySet<string>;
  /** The API-Key-Expiration header's value; undefined for a key that does not expire. */
  expiresHeader: string | undefined;
}

export type AuthFailure = 'missing' | 'malformed' | 'unknown' | 'mistyped' | 'revoked' | 'expired';

/**
 * `unavailable`: a managed key could not be checked (the keys are stale: the database cannot be read).
 * A refused managed key that was whole (revoked, expired, unknown) is named by `keyId` for the log:
 * who still tries a revoked key is what an operator looks for after a leak.
 */
export type AuthResult = { ok: true; key: AuthenticatedKey } | { ok: false; reason: AuthFailure | 'unavailable'; keyId?: string };

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token; the scheme word is case-insensitive (RFC 9110 §11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The client a bootstrap key (API_KEYS) is: `env:` and the first 16 hex digits of the key's SHA-256 (it names the key too). */
export const bootstrapClientId = (key: string) => `env:${keyDigest(key).toString('hex').slice(0, 16)}`;

/** A bootstrap key (API_KEYS): its own client, named after its digest, holding every scope. */
function bootstrapKey(key: string, scopes: ReadonlySet<string>) {
  const id = bootstrapClientId(key);
  return {
    digest: keyDigest(key),
    key: { keyId: id, clientId: id, client: id, scopes, expiresHeader: undefined } satisfies AuthenticatedKey,
  };
}

export interface AuthOptions {
  /** The bootstrap keys (API_KEYS): for development and bootstrap, every scope, never expiring; changed by a restart. */
  bootstrapKeys: readonly string[];
  /** The managed keys (`npm run keys`, migration 0005); absent: only the bootstrap keys are known. */
  keyRegistry?: KeyRegistry;
  /** Every scope the spec names: what a bootstrap key holds. */
  scopes: readonly string[];
}

/** The bearer check of a request's headers (`createAuthenticator`). */
export type Authenticator = (headers: IncomingHttpHeaders, rawHeaders: readonly string[]) => AuthResult;

/**
 * The bearer check for the spec's `bearerAuth` scheme. A managed key (`asa_…`) is read from its
 * text (a wrong checksum is refused before any lookup), found by its id in the registry's memory
 * and compared by its SHA-256 digest; a bootstrap key (API_KEYS) is compared against every configured one.
 * Comparisons are constant-time (timingSafeEqual on digests): the time taken says nothing about
 * how much of a secret matched. No query is made: the registry refreshes itself in the background.
 */
export function createAuthenticator({ bootstrapKeys, keyRegistry, scopes }: AuthOptions): Authenticator {
  const all = new Set(scopes);
  const bootstrap = bootstrapKeys.map((key) => bootstrapKey(key, all));
  const matchBootstrap = (token: string): AuthResult => {
    const presented = keyDigest(token);
    let found: AuthenticatedKey | undefined;
    for (const b of bootstrap) if (timingSafeEqual(b.digest, presented) && !found) found = b.key;
    return found ? { ok: true, key: found } : { ok: false, reason: 'unknown' };
  };

  return function authenticate(headers: IncomingHttpHeaders, rawHeaders: readonly string[]): AuthResult {
    // Node keeps only the first of repeated Authorization headers; an ambiguous request is refused.
    let count = 0;
    for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === 'authorization') count++;
    const header = headers.authorization;
    if (count === 0 || header === undefined || header === '') return { ok: false, reason: 'missing' };
    const token = count === 1 ? BEARER.exec(header)?.[1] : undefined;
    if (token === undefined) return { ok: false, reason: 'malformed' };
    const parsed = parseKey(token);
    if (parsed.kind === 'other') return matchBootstrap(token);
    if (parsed.kind === 'mistyped') return { ok: false, reason: 'mistyped' };
    const keyId = displayPrefix(parsed.id);
    const found = keyRegistry?.lookup(parsed.id) ?? { state: 'unknown' };
    if (found.state === 'stale') return { ok: false, reason: 'unavailable', keyId };
    if (found.state === 'unknown' || !timingSafeEqual(found.key.digest, keyDigest(token))) return { ok: false, reason: 'unknown', keyId };
    const { key } = found;
    if (key.revoked) return { ok: false, reason: 'revoked', keyId };
    if (key.expiresAt !== undefined && key.expiresAt <= Date.now()) return { ok: false, reason: 'expired', keyId };
    keyRegistry?.used(key.id);
    return {
      ok: true,
      key: { keyId, clientId: key.clientId, client: key.client, scopes: key.scopes, expiresHeader: key.expiresHeader },
    };
  };
}

export const AUTH_MESSAGES: Record<AuthFailure, string> = {
  missing: 'Missing API key: send Authorization: Bearer <API_KEY>',
  malformed: 'Malformed Authorization header: expected a single "Bearer <API_KEY>"',
  unknown: 'Invalid API key',
  mistyped: 'Invalid API key: it is mistyped or incomplete (its checksum does not match)',
  revoked: 'Invalid API key: it was revoked',
  expired: 'Invalid API key: it has expired',
};

/** RFC 6750 §3's error_description: what the holder of a key that was once valid needs to know. */
const DESCRIPTIONS: Partial<Record<AuthFailure, string>> = {
  mistyped: 'The API key is mistyped or incomplete',
  revoked: 'The API key was revoked',
  expired: 'The API key expired',
};

/** RFC 6750 §3: the challenge; error="invalid_token" once a credential was presented. */
export function challenge(reason: AuthFailure): string {
  if (reason === 'missing') return 'Bearer realm="animal-store"';
  const description = DESCRIPTIONS[reason];
  return `Bearer realm="animal-store", error="invalid_token"${description ? `, error_description="${description}"` : ''}`;
}

/** The 401 for a request without a valid key, with its challenge; 503 when a managed key could not be checked. */
export function unauthorizedError(auth: Extract<AuthResult, { ok: false }>): HttpError {
  if (auth.reason === 'unavailable') return serviceUnavailable('API keys cannot be checked: the database is unreachable; retry shortly');
  return new HttpError(401, 'unauthorized', AUTH_MESSAGES[auth.reason], { 'WWW-Authenticate': challenge(auth.reason) });
}

/** RFC 6750 §3.1: 403 `insufficient_scope` naming the scopes the operation needs (those of its first requirement). */
export function insufficientScope(operationId: string, needed: readonly string[]): HttpError {
  const scope = needed.join(' ');
  return new HttpError(403, 'insufficient_scope', `This API key lacks the scope ${scope}, which ${operationId} needs`, {
    'WWW-Authenticate': `Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`,
  });
}

/** True when `key` holds every scope of one of the operation's requirements (or it names none). */
export const holdsScopes = (key: AuthenticatedKey, requirements: readonly (readonly string[])[]): boolean =>
  requirements.length === 0 || requirements.some((needed) => needed.every((s) => key.scopes.has(s)));
