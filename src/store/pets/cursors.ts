import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';

/**
 * Where a walk of the catalogue stands: just after the animal `afterId` (keyset on `id`),
 * within the walk's filters: `status` and `categoryId` (undefined: not filtered by it).
 */
export interface PagePosition {
  afterId: number;
  status: string | undefined;
  categoryId?: number | undefined;
}

/** Turns page positions into the opaque cursors clients follow, and back. */
export interface CursorCodec {
  encode(position: PagePosition): string;
  /** The position a cursor this codec made names; undefined for anything else (altered, truncated, invented). */
  decode(cursor: string): PagePosition | undefined;
}

// Version 1: [1][filter length n][filter, n bytes of ASCII][afterId, 8 bytes big-endian][tag, 16 bytes],
// in base64url. The tag is HMAC-SHA-256 of everything before it, cut to 128 bits.
// Version 2, a walk filtered by category: the same with the categoryId (8 bytes, signed big-endian)
// before afterId. A walk without a category is still written as version 1, so that the cursors of
// the status filter read as they did; both are read.
const VERSION = 1;
const WITH_CATEGORY = 2;
const ID_BYTES = 8;
const TAG_BYTES = 16;
/** The longest filter a cursor holds: with it, a cursor is at most 62 characters (a version 2), within the spec's 64. */
export const MAX_FILTER_BYTES = 12;

/** A cursor codec signing with `secret` (32 bytes, from the signing_keys table: the same for every instance). */
export function createCursorCodec(secret: Buffer): CursorCodec {
  const key = createSecretKey(secret);
  const tagOf = (payload: Buffer) => createHmac('sha256', key).update(payload).digest().subarray(0, TAG_BYTES);
  return {
    encode({ afterId, status = '', categoryId }) {
      if (!Number.isSafeInteger(afterId) || afterId < 0) throw new RangeError(`a page position needs a safe id, got ${afterId}`);
      if (categoryId !== undefined && !Number.isSafeInteger(categoryId))
        throw new RangeError(`a category is a safe integer, got ${categoryId}`);
      const filter = Buffer.from(status, 'latin1');
      if (filter.length > MAX_FILTER_BYTES) throw new RangeError(`a page filter is at most ${MAX_FILTER_BYTES} bytes`);
      const category = categoryId === undefined ? 0 : ID_BYTES;
      const payload = Buffer.alloc(2 + filter.length + category + ID_BYTES);
      payload[0] = categoryId === undefined ? VERSION : WITH_CATEGORY;
      payload[1] = filter.length;
      filter.copy(payload, 2);
      if (categoryId !== undefined) payload.writeBigInt64BE(BigInt(categoryId), 2 + filter.length);
      payload.writeBigUInt64BE(BigInt(afterId), 2 + filter.length + category);
      return Buffer.concat([payload, tagOf(payload)]).toString('base64url');
    },
    decode(cursor) {
      const bytes = Buffer.from(cursor, 'base64url');
      // Node's decoder skips what is not base64url and ignores a last character's spare bits: only
      // the one text that encodes these bytes is their cursor, so an altered character is never read as it.
      if (bytes.toString('base64url') !== cursor) return undefined;
      const filterLength = bytes[1] ?? 0;
      const category = bytes[0] === WITH_CATEGORY ? ID_BYTES : 0;
      if (
        (bytes[0] !== VERSION && bytes[0] !== WITH_CATEGORY) ||
        filterLength > MAX_FILTER_BYTES ||
        bytes.length !== 2 + filterLength + category + ID_BYTES + TAG_BYTES
      )
        return undefined;
      const payload = bytes.subarray(0, bytes.length - TAG_BYTES);
      if (!timingSafeEqual(tagOf(payload), bytes.subarray(payload.length))) return undefined;
      const afterId = Number(payload.readBigUInt64BE(2 + filterLength + category));
      const categoryId = category === 0 ? undefined : Number(payload.readBigInt64BE(2 + filterLength));
      if (!Number.isSafeInteger(afterId) || (categoryId !== undefined && !Number.isSafeInteger(categoryId))) return undefined;
      const status = filterLength === 0 ? undefined : payload.toString('latin1', 2, 2 + filterLength);
      return category === 0 ? { afterId, status } : { afterId, status, categoryId };
    },
  };
}
