import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { pointerToken } from '../contract/errorBody';
import type { BodyType } from '../contract/spec';
import { HttpError, invalidField } from './errors';
import { BODY_LIMIT_BYTES, hasBody } from './connection';

export { BODY_LIMIT_BYTES };
/** How deep JSON may nest (objects and arrays): a NewPet needs 1; deeper bodies are refused with 400, not walked. */
export const BODY_MAX_DEPTH = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The 413, with the connection closed after it: the rest of the body is never read. */
const tooLarge = () =>
  new HttpError(413, 'payload_too_large', `The request body exceeds ${BODY_LIMIT_BYTES} bytes`, { Connection: 'close' });

/**
 * The body's bytes, at most BODY_LIMIT_BYTES of them: a Content-Length above the limit is
 * refused before anything is read, and a chunked body is cut off where it passes the limit
 * (413, the connection closed after it). A body that stops before its end is a 400.
 */
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
export async function readJsonBody(req: Request, mediaTypes: readonly string[]): Promise<DecodedBody | undefined> {
  if (!hasBody(req)) return undefined;
  // The contract names no content coding (RFC 9110 §8.4): a compressed body is refused, never inflated.
  const coding = req.headers['content-encoding']?.trim().toLowerCase();
  if (coding !== undefined && coding !== '' && coding !== 'identity')
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Encoding ${JSON.stringify(req.headers['content-encoding'])} is not accepted: send the body uncompressed`,
      // RFC 7694 §3: the codings this resource accepts.
      { 'Accept-Encoding': 'identity' },
    );
  const contentType = req.headers['content-type'];
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
  const bytes = await readBytes(req);
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

const LONE_SURROGATE = /\p{Cs}/u;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const INTEGER_TOKEN = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/** The exact integer a JSON number token denotes, or undefined when it has a fractional part. */
function exactIntegerOf(token: string): bigint | undefined {
  const [, sign, whole, fraction = '', exponent = '0'] = INTEGER_TOKEN.exec(token) ?? [];
  let digits = (whole + fraction).replace(/^0+(?=[0-9])/, '');
  let scale = Number(exponent) - fraction.length;
  while (scale < 0 && digits.length > 1 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    scale++;
  }
  if (/^0+$/.test(digits)) return 0n;
  if (scale < 0) return undefined;
  return BigInt(sign + digits) * 10n ** BigInt(scale);
}

/**
 * True when JSON.parse would turn the token into an integer other than the one written
 * (9007199254740993 becomes …992, 4503599627370497.5 becomes …498, 1e-400 becomes 0) or
 * into Infinity (2e400). Fractional values that stay fractional, and large values written as floats,
 * are ordinary floats, left to validation.
 */
function changesWhenParsed(token: string): boolean {
  const n = Number(token);
  if (!Number.isFinite(n)) return true;
  if (!Number.isInteger(n)) return false;
  // Written as a float and beyond 2^53: a float by intent, every such double is an
  // "integer", and an integer field refuses it by its range; left to the schema.
  if (/[.eE]/.test(token) && Math.abs(n) > 2 ** 53) return false;
  const exact = exactIntegerOf(token);
  return exact === undefined || exact !== BigInt(n);
}

/** Where the scan stands inside one object or array: the key of the value being read, or its index. */
type Level = { key: string | undefined } | { index: number };

/**
 * One pass over valid JSON text, outside its strings: the first number token JSON.parse would
 * change (with the object key it is the value of, when there is one, and its JSON Pointer), or
 * that the text nests deeper than BODY_MAX_DEPTH.
 */
function scanJson(text: string): { token: string; key?: string; pointer: string; position: number } | 'too deep' | undefined {
  let lastString: string | undefined;
  const levels: Level[] = [];
  const top = () => levels[levels.length - 1];
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
      lastString = text.slice(start, i + 1);
    } else if (c === ':') {
      const level = top();
      if (level && 'key' in level) level.key = lastString === undefined ? undefined : (JSON.parse(lastString) as string);
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const token = NUMBER.exec(text)?.[0] ?? c;
      if (changesWhenParsed(token)) {
        const level = top();
        const pointer = levels.map((l) => `/${'key' in l ? pointerToken(l.key ?? '') : l.index}`).join('');
        return { token, key: level && 'key' in level ? level.key : undefined, pointer, position: i };
      }
      i += token.length - 1;
    } else if (c === '[' || c === '{') {
      if (levels.length + 1 > BODY_MAX_DEPTH) return 'too deep';
      levels.push(c === '[' ? { index: 0 } : { key: undefined });
    } else if (c === ']' || c === '}') {
      levels.pop();
    } else if (c === ',') {
      const level = top();
      if (level && 'index' in level) level.index += 1;
      else if (level) level.key = undefined;
    }
  }
  return undefined;
}

/** The first string (value or key) holding an unpaired surrogate: its path as keys, and its JSON Pointer. */
function findLoneSurrogate(value: unknown, keys: string[], pointer: string): { keys: string[]; pointer: string } | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? { keys, pointer } : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const at = { keys: [...keys, k], pointer: `${pointer}/${pointerToken(k)}` };
    if (LONE_SURROGATE.test(k)) return at;
    const found = findLoneSurrogate(v, at.keys, at.pointer);
    if (found) return found;
  }
  return undefined;
}

/** JSON.parse, refusing text that it would silently change: inexact integers and unpaired surrogates. */
export function parseJsonExactly(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalidField('malformed_json', {
      in: 'body',
      pointer: '',
      rule: 'json',
      detail: `The request body is not valid JSON: ${(err as Error).message}`,
    });
  }
  // Only valid JSON reaches the scanner, so its strings are well terminated.
  const inexact = scanJson(text);
  if (inexact === 'too deep')
    throw invalidField('validation_failed', {
      in: 'body',
      pointer: '',
      rule: 'maxDepth',
      detail: `The request body nests objects and arrays more than ${BODY_MAX_DEPTH} levels deep`,
    });
  if (inexact) {
    const where = inexact.key === undefined ? `at position ${inexact.position}` : `in property '${inexact.key}'`;
    throw invalidField('validation_failed', {
      in: 'body',
      pointer: inexact.pointer,
      rule: 'exactInteger',
      detail: `The number ${inexact.token} ${where} cannot be represented exactly: integers must lie between -9007199254740991 and 9007199254740991`,
    });
  }
  const surrogateAt = findLoneSurrogate(value, [], '');
  if (surrogateAt !== undefined) {
    const where = surrogateAt.keys.length === 0 ? 'The request body' : `Body property '${surrogateAt.keys.join('.')}'`;
    throw invalidField('validation_failed', {
      in: 'body',
      pointer: surrogateAt.pointer,
      rule: 'unicode',
      detail: `${where} contains an unpaired UTF-16 surrogate, which is not valid Unicode text`,
    });
  }
  return value;
}
