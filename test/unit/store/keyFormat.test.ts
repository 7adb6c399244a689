import { createHash } from 'node:crypto';
import { KEY_LENGTH, KEY_PREFIX, displayPrefix, keyDigest, mintKey, parseKey, randomBase62 } from '../../../src/store/keys/format';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('managed API keys: their text (src/store/keys/format.ts)', () => {
  test('when a key is minted, then it is asa_, a 12-character id, _, a 32-character secret and a 6-character checksum, and parses back to its id', () => {
    const { id, text, digest } = mintKey();
    expect(text).toMatch(/^asa_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}$/);
    expect(text).toHaveLength(KEY_LENGTH);
    expect(text.startsWith(displayPrefix(id))).toBe(true);
    expect(parseKey(text)).toEqual({ kind: 'managed', id });
    expect(digest).toEqual(createHash('sha256').update(text).digest());
    expect(keyDigest(text)).toEqual(digest);
  });

  test('when many keys are minted, then no two share an id or a secret, and every base62 character is drawn', () => {
    const keys = Array.from({ length: 2_000 }, () => mintKey());
    expect(new Set(keys.map((k) => k.id)).size).toBe(keys.length);
    expect(new Set(keys.map((k) => k.text.slice(17, 49))).size).toBe(keys.length);
    expect(new Set(randomBase62(20_000)).size).toBe(62);
  });

  test('when any one character of a key is changed to any other, then the change is caught by the checksum (or the shape), with no lookup', () => {
    const { text } = mintKey();
    const caught: string[] = [];
    for (let i = 0; i < text.length; i++) {
      for (const c of `${BASE62}_`) {
        if (c === text[i]) continue;
        const changed = `${text.slice(0, i)}${c}${text.slice(i + 1)}`;
        if (parseKey(changed).kind !== 'managed') caught.push(changed);
        else throw new Error(`not caught: position ${i} → ${c}`);
      }
    }
    expect(caught.length).toBe(text.length * 62);
  });

  test('when two neighbouring characters of a key are swapped, then the checksum catches it', () => {
    const { text } = mintKey();
    for (let i = KEY_PREFIX.length; i < text.length - 1; i++) {
      if (text[i] === text[i + 1]) continue;
      const swapped = `${text.slice(0, i)}${text[i + 1]}${text[i]}${text.slice(i + 2)}`;
      expect({ i, kind: parseKey(swapped).kind }).toEqual({ i, kind: 'mistyped' });
    }
  });

  test.each([
    ['no prefix (an API_KEYS key)', 'a-development-key-0123456789', 'other'],
    ['another prefix', 'ghp_0123456789abcdefghijklmnopqrstuvwxyz', 'other'],
    ['the prefix alone', 'asa_', 'mistyped'],
    ['the prefix and junk', 'asa_not-a-key', 'mistyped'],
    ['a key cut short', () => mintKey().text.slice(0, -1), 'mistyped'],
    ['a key made longer', () => `${mintKey().text}A`, 'mistyped'],
    ['a key in lower case', () => mintKey().text.toLowerCase(), 'mistyped'],
  ])('when the token is %s, then it is read as %s', (_what, token, kind) => {
    expect(parseKey(typeof token === 'function' ? token() : token).kind).toBe(kind);
  });
});
