import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The text of a managed API key: `asa_<id>_<secret><checksum>`, 55 characters of A-Z a-z 0-9 and `_`.
 *
 *   asa_      a fixed prefix, so that secret scanners (and people) recognise an Animal Store API key
 *   <id>      12 base62 characters: the key's id, public (`npm run keys -- list` shows it)
 *   <secret>  32 base62 characters from the operating system's random source: about 190 bits
 *   <checksum> 6 base62 characters: CRC-32 of everything before it, so that a mistyped or cut key
 *             is refused without a lookup (as GitHub's tokens carry one)
 *
 * Only the SHA-256 of the whole text is stored (migration 0005 says why a fast digest is right).
 */
export const KEY_PREFIX = 'asa_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_LENGTH = 12;
const SECRET_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const KEY_LENGTH = KEY_PREFIX.length + ID_LENGTH + 1 + SECRET_LENGTH + CHECKSUM_LENGTH;
const SHAPE = new RegExp(`^${KEY_PREFIX}([0-9A-Za-z]{${ID_LENGTH}})_[0-9A-Za-z]{${SECRET_LENGTH}}([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);

/** `length` base62 characters, each uniformly drawn (bytes of 248 and above are skipped: 248 = 4 × 62). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** CRC-32 of `text` as 6 base62 digits (62^6 > 2^32). */
function checksumOf(text: string): string {
  let n = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** SHA-256 of a key's whole text: what is stored and compared. */
export const keyDigest = (text: string): Buffer => hash('sha256', text, 'buffer');

/** What may be shown of a key: its prefix and id (`asa_3kTm9QxLw2Pa`), never the secret. */
export const displayPrefix = (id: string) => `${KEY_PREFIX}${id}`;

export interface MintedKey {
  id: string;
  /** The key as the client sends it: shown once, never stored. */
  text: string;
  digest: Buffer;
}

/** A new key, with a fresh id and secret. */
export function mintKey(): MintedKey {
  const id = randomBase62(ID_LENGTH);
  const body = `${KEY_PREFIX}${id}_${randomBase62(SECRET_LENGTH)}`;
  const text = `${body}${checksumOf(body)}`;
  return { id, text, digest: keyDigest(text) };
}

/**
 * A bearer token read as a managed key: its id when the shape and the checksum hold, `mistyped`
 * when it has the prefix but not the shape or not the checksum (a typo, a key cut short), and
 * `other` for a token without the prefix (a bootstrap key, API_KEYS). No lookup: the text alone decides.
 */
export type ParsedKey = { kind: 'managed'; id: string } | { kind: 'mistyped' } | { kind: 'other' };

export function parseKey(token: string): ParsedKey {
  if (!token.startsWith(KEY_PREFIX)) return { kind: 'other' };
  const shape = token.length === KEY_LENGTH ? SHAPE.exec(token) : null;
  if (!shape || checksumOf(token.slice(0, -CHECKSUM_LENGTH)) !== shape[2]) return { kind: 'mistyped' };
  return { kind: 'managed', id: shape[1] as string };
}
