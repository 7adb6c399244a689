import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { BodyType } from '../contract/spec';
import { HttpError, invalidField } from './errors';
import { BODY_LIMIT_BYTES, hasBody } from './connection';
import { parseJsonExactly } from './exactJson';

/** A body's two limits: its size, and how deep its JSON may nest. */
export { BODY_LIMIT_BYTES };
export { BODY_MAX_DEPTH } from './exactJson';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The 413, with the connection closed after it: the rest of the body is never read. */
const tooLarge = () =>
  new HttpError(413, 'payload_too_large', `The request body exceeds ${BODY_LIMIT_BYTES} bytes`, { Connection: 'close' });

/**
 * Where a request's body comes from, whichever door it came through: the socket (`streamedBody`)
 * or bytes already in hand (`bytesBody`, an in-process call). Either way at most BODY_LIMIT_BYTES
 * are read, and more is a 413.
 */
export interface BodySource {
  read(): Promise<Buffer>;
}

/**
 * The body on the socket: a Content-Length above the limit is refused before anything is read,
 * and a chunked body is cut off where it passes the limit (413, the connection closed after it).
 * A body that stops before its end is a 400.
 */
export const streamedBody = (req: IncomingMessage): BodySource => ({ read: () => readBytes(req) });

/** Bytes in hand, under the same limit. */
export const bytesBody = (bytes: Buffer): BodySource => ({
  read: () => (bytes.length > BODY_LIMIT_BYTES ? Promise.reject(tooLarge()) : Promise.resolve(bytes)),
});

function readBytes(req: IncomingMessage): Promise<Buffer> {
  if (Number(req.headers['content-length']) > BODY_LIMIT_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err?: HttpError) => {
      req.off('data', onData).off('end', onEnd).off('aborted', onAborted).off('error', onAborted);
      if (err) {
        req.pause();
        reject(err);
      } else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) return finish(tooLarge());
      chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onAborted = () =>
      finish(invalidField('validation_failed', { in: 'body', pointer: '', rule: 'complete', detail: 'The request body was incomplete' }));
    req.on('data', onData).on('end', onEnd).on('aborted', onAborted).on('error', onAborted);
  });
}

/** A request body as sent and as decoded, once. */
export interface DecodedBody {
  /** The bytes as sent (for Idempotency-Key's fingerprint). */
  bytes: Buffer;
  /** The JSON value; undefined when the body is empty. */
  value: unknown;
}

/**
 * Reads and decodes the body of an operation that takes one: the only place a body is
 * decoded. Returns undefined when no body was sent (validation then reports it missing). The
 * media type must be one the spec lists for the operation, and JSON must be UTF-8 (RFC 8259 §8.1).
 */
export async function readJsonBody(
  headers: IncomingHttpHeaders,
  body: BodySource,
  mediaTypes: readonly string[],
): Promise<DecodedBody | undefined> {
  if (!hasBody(headers)) return undefined;
  // The contract names no content coding (RFC 9110 §8.4): a compressed body is refused, never inflated.
  const coding = headers['content-encoding']?.trim().toLowerCase();
  if (coding !== undefined && coding !== '' && coding !== 'identity')
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Encoding ${JSON.stringify(headers['content-encoding'])} is not accepted: send the body uncompressed`,
      // RFC 7694 §3: the codings this resource accepts.
      { 'Accept-Encoding': 'identity' },
    );
  const contentType = headers['content-type'];
  const [mediaType = '', ...params] = (contentType ?? '').split(';').map((s) => s.trim().toLowerCase());
  if (!mediaTypes.includes(mediaType)) {
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Type must be ${mediaTypes.join(' or ')}, got ${contentType === undefined ? 'none' : JSON.stringify(contentType)}`,
    );
  }
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpError(415, 'unsupported_media_type', `JSON must be sent as UTF-8, got charset ${charset}`);
  }
  const bytes = await body.read();
  let text = '';
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalidField('malformed_json', { in: 'body', pointer: '', rule: 'utf8', detail: 'The request body is not valid UTF-8' });
  }
  return { bytes, value: text.trim() === '' ? undefined : parseJsonExactly(text) };
}

/** The JSON types a request body's schema can name at its top level, as JSON Schema names them. */
const jsonTypeOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);
const withArticle = (type: string) => (type === 'null' ? 'null' : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/**
 * Refuses a decoded body whose JSON type is not the one the operation's schema names (an object
 * or an array: the spec's loader allows no other), with a message that says what it got:
 * "request body must be an object, got a string". A JSON string whose content is JSON (a body
 * encoded twice) is such a body: it is never decoded again.
 */
export function requireBodyType(value: unknown, expected: BodyType): void {
  const actual = jsonTypeOf(value);
  if (actual === expected.type || (actual === 'null' && expected.nullable)) return;
  throw invalidField('validation_failed', {
    in: 'body',
    pointer: '',
    rule: 'type',
    detail: `request body must be ${withArticle(expected.type)}, got ${withArticle(actual)}`,
  });
}
