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
