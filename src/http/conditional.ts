import { hash } from 'node:crypto';

/** What the answers that carry an ETag say to caches: anyone but a shared cache may keep them, revalidated before each use. */
export const CONDITIONAL_CACHE_CONTROL = 'private, no-cache';

/**
 * A strong entity tag (RFC 9110 §8.8.3) of a representation: its body as sent (its UTF-8 bytes) and
 * its `Link` (a page's next-page link is part of what the client holds), 128 bits of SHA-256 in
 * base64url. The same bytes always give the same tag, on every instance.
 */
export function entityTag(body: Buffer, link: string | undefined): string {
  const tagged = link === undefined ? body : Buffer.concat([body, Buffer.from(`\n${link}`)]);
  return `"${hash('sha256', tagged, 'base64url').slice(0, 22)}"`;
}

// One member of an If-None-Match list: optional W/, then a quoted opaque tag (RFC 9110 §8.8.3: etagc), then a
// comma or the end; or an empty member (RFC 9110 §5.6.1: a recipient accepts them). A tag may hold commas.
const MEMBER = /[ \t]*(?:(?:W\/)?"([\x21\x23-\x7E\x80-\xFF]*)")?[ \t]*(?:,|$)/y;

/**
 * RFC 9110 §13.1.2: whether `If-None-Match` matches the current representation's tag, so that a
 * GET is answered 304. `*` matches any current representation; otherwise each member of the list
 * is compared weakly (W/ ignored). A field that is no list of entity tags is ignored, as if absent:
 * the full answer is given. Node joins repeated fields with ", ", which reads as one list.
 */
export function matchesTag(field: string | undefined, etag: string): boolean {
  if (field === undefined) return false;
  const value = field.trim();
  if (value === '*') return true;
  if (value === '') return false;
  const opaque = etag.slice(1, -1);
  let found = false;
  MEMBER.lastIndex = 0;
  while (MEMBER.lastIndex < value.length) {
    const member = MEMBER.exec(value);
    // Not a list of entity tags (an unquoted tag, a stray character): ignored as a whole.
    if (!member) return false;
    if (member[1] === opaque) found = true;
  }
  return found;
}
