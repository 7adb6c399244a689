import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from './errors';

/**
 * `keyId` names the key in logs and metrics without revealing it: the first 8 hex digits of
 * its SHA-256. `owner` is the whole digest: what the key's stored records are scoped to.
 */
export type AuthResult = { ok: true; keyId: string; owner: string } | { ok: false; reason: 'missing' | 'malformed' | 'unknown' };

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token; the scheme word is case-insensitive (RFC 9110 §11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

// crypto.hash: the one-shot form, cheaper per call than a Hash object.
const digest = (key: string): Buffer => hash('sha256', key, 'buffer');

/**
 * The bearer check for the spec's `bearerAuth` scheme. Keys are compared as SHA-256
 * digests with timingSafeEqual, against every configured key, so the time taken says
 * nothing about how much of a key matched or which key it was.
 */
export function createBearerAuth(apiKeys: readonly string[]) {
  const digests = apiKeys.map(digest);
  const owners = digests.map((d) => d.toString('hex'));
  const keyIds = owners.map((hex) => `key:${hex.slice(0, 8)}`);
  return function authenticate(headers: IncomingHttpHeaders, rawHeaders: readonly string[]): AuthResult {
    // Node keeps only the first of repeated Authorization headers; an ambiguous request is refused.
    let count = 0;
    for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === 'authorization') count++;
    const header = headers.authorization;
    if (count === 0 || header === undefined || header === '') return { ok: false, reason: 'missing' };
    const token = count === 1 ? BEARER.exec(header)?.[1] : undefined;
    if (token === undefined) return { ok: false, reason: 'malformed' };
    const presented = digest(token);
    let keyIndex = -1;
    digests.forEach((d, i) => {
      if (timingSafeEqual(d, presented) && keyIndex === -1) keyIndex = i;
    });
    return keyIndex === -1
      ? { ok: false, reason: 'unknown' }
      : { ok: true, keyId: keyIds[keyIndex] as string, owner: owners[keyIndex] as string };
  };
}

export const AUTH_MESSAGES: Record<Exclude<AuthResult, { ok: true }>['reason'], string> = {
  missing: 'Missing API key: send Authorization: Bearer <API_KEY>',
  malformed: 'Malformed Authorization header: expected a single "Bearer <API_KEY>"',
  unknown: 'Invalid API key',
};

/** RFC 6750 §3: the challenge; error="invalid_token" once a credential was presented. */
export function challenge(reason: keyof typeof AUTH_MESSAGES): string {
  return reason === 'missing' ? 'Bearer realm="animal-store"' : 'Bearer realm="animal-store", error="invalid_token"';
}

/** The 401 for a request without a valid key, with its challenge. */
export function unauthorizedError(auth: Exclude<AuthResult, { ok: true }>): HttpError {
  return new HttpError(401, 'unauthorized', AUTH_MESSAGES[auth.reason], { 'WWW-Authenticate': challenge(auth.reason) });
}
