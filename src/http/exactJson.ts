/**
 * JSON.parse, refusing what it would silently change (an integer beyond 2^53 − 1 rounded, an
 * unpaired surrogate kept) and text nested deeper than BODY_MAX_DEPTH: the one decoding of every
 * request body. Text in, value out; nothing of HTTP but the 400 it answers with.
 */
import { pointerToken } from '../contract/errorBody';
import { invalidField } from './errors';

/** How deep JSON may nest (objects and arrays): a NewPet needs 1; deeper bodies are refused with 400, not walked. */
export const BODY_MAX_DEPTH = 32;

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

/**
 * Where the scan stands inside one object or array: where the key of the value being read starts and
 * ends in the text (read as a string only for a refusal), or the value's index.
 */
type Level = { keyAt: number; keyEnd: number } | { index: number };

// The characters the scan looks for, as the UTF-16 code units it reads.
const code = (c: string): number => c.charCodeAt(0);
const [QUOTE, BACKSLASH, COLON, COMMA, MINUS, ZERO, NINE] = [code('"'), code('\\'), code(':'), code(','), code('-'), code('0'), code('9')];
const [OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT] = [code('['), code(']'), code('{'), code('}')];
/** Integers of at most 15 digits are below 2^53: JSON.parse keeps every one of them exactly. */
const ALWAYS_EXACT_DIGITS = 15;

/** The object key a level's value is read under, decoded (`undefined` in an array, or before the key's colon). */
function keyOf(text: string, level: Level | undefined): string | undefined {
  if (!level || !('keyAt' in level) || level.keyAt < 0) return undefined;
  return JSON.parse(text.slice(level.keyAt, level.keyEnd)) as string;
}

/**
 * One pass over valid JSON text, outside its strings: the first number token JSON.parse would
 * change (with the object key it is the value of, when there is one, and its JSON Pointer), or
 * that the text nests deeper than BODY_MAX_DEPTH. A plain integer of up to 15 digits, the commonest
 * number, is stepped over without being read as a token; keys are read as text only for a refusal.
 */
function scanJson(text: string): { token: string; key?: string; pointer: string; position: number } | 'too deep' | undefined {
  let stringAt = -1;
  let stringEnd = -1;
  const levels: Level[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      stringAt = i;
      for (i++; text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
      stringEnd = i + 1;
    } else if (c === COLON) {
      const level = levels[levels.length - 1];
      if (level && 'keyAt' in level) {
        level.keyAt = stringAt;
        level.keyEnd = stringEnd;
      }
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const digitsAt = c === MINUS ? i + 1 : i;
      let end = digitsAt;
      while (end < text.length && text.charCodeAt(end) >= ZERO && text.charCodeAt(end) <= NINE) end++;
      const next = text.charAt(end);
      if (end - digitsAt <= ALWAYS_EXACT_DIGITS && next !== '.' && next !== 'e' && next !== 'E') {
        i = end - 1;
        continue;
      }
      NUMBER.lastIndex = i;
      const token = NUMBER.exec(text)?.[0] ?? text.charAt(i);
      if (changesWhenParsed(token)) {
        const pointer = levels.map((l) => `/${'keyAt' in l ? pointerToken(keyOf(text, l) ?? '') : l.index}`).join('');
        return { token, key: keyOf(text, levels[levels.length - 1]), pointer, position: i };
      }
      i += token.length - 1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (levels.length + 1 > BODY_MAX_DEPTH) return 'too deep';
      levels.push(c === OPEN_ARRAY ? { index: 0 } : { keyAt: -1, keyEnd: -1 });
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      levels.pop();
    } else if (c === COMMA) {
      const level = levels[levels.length - 1];
      if (level && 'index' in level) level.index += 1;
      else if (level) level.keyAt = -1;
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
  // A lone surrogate in a parsed string is in the text itself or written as a `\u` escape: otherwise none is looked for.
  const surrogateAt = text.includes('\\u') || LONE_SURROGATE.test(text) ? findLoneSurrogate(value, [], '') : undefined;
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
