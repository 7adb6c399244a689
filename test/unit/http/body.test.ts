import { HttpError } from '../../../src/http/errors';
import { parseJsonExactly } from '../../../src/http/exactJson';

const refusal = (text: string): string => {
  try {
    parseJsonExactly(text);
  } catch (err) {
    if (err instanceof HttpError) return err.message;
    throw err;
  }
  throw new Error(`expected ${text} to be refused`);
};

describe('parseJsonExactly', () => {
  test.each([
    ['{"a":1,"b":-2,"c":0,"d":-0}', { a: 1, b: -2, c: 0, d: -0 }],
    ['{"a":1.5,"b":0.1,"c":-1.25e-3}', { a: 1.5, b: 0.1, c: -1.25e-3 }],
    ['{"a":1.0,"b":10e0,"c":1E2,"d":2.50e1}', { a: 1, b: 10, c: 100, d: 25 }],
    ['{"a":9007199254740991,"b":-9007199254740991}', { a: 9007199254740991, b: -9007199254740991 }],
    ['{"a":9007199254740992}', { a: 9007199254740992 }],
    [
      '{"s":"9007199254740993 in a string is text","t":"quote \\" 123456789012345678901 \\\\"}',
      { s: '9007199254740993 in a string is text', t: 'quote " 123456789012345678901 \\' },
    ],
    ['[1,2,3]', [1, 2, 3]],
    ['"🐈"', '🐈'],
    ['{"emoji":"\\ud83d\\udc08"}', { emoji: '🐈' }],
    // 15 digits and 16, either side of the integers always kept exactly, and those of 16 that are.
    [
      '{"a":999999999999999,"b":-999999999999999,"c":[1000000000000000,-4503599627370497]}',
      { a: 999999999999999, b: -999999999999999, c: [1e15, -4503599627370497] },
    ],
    ['{"k\\":":1,"n":[{"x":2},3]}', { 'k":': 1, n: [{ x: 2 }, 3] }],
    // Found by the fuzzer in an ignored property: a large float is a float, not a rounded integer.
    ['{"x":-8.669118362183402e+120,"y":1.5e300}', { x: -8.669118362183402e120, y: 1.5e300 }],
  ])('when the body is %s, then it is parsed as written', (text, value) => {
    expect(parseJsonExactly(text)).toEqual(value);
  });

  test.each([
    ['{"categoryId":9007199254740993}', "The number 9007199254740993 in property 'categoryId' cannot be represented exactly"],
    ['{"a":{"b":[1, 2, 12345678901234567891]}}', 'The number 12345678901234567891 at position 17 cannot be represented exactly'],
    ['[4503599627370497.5]', 'The number 4503599627370497.5 at position 1'],
    ['{"x":1e-400}', "The number 1e-400 in property 'x'"],
    ['{"k:\\"":2e400000000}', "The number 2e400000000 in property 'k:\"'"],
    ['{"k":-1e309}', "The number -1e309 in property 'k'"],
  ])('when the body is %s, then it is refused', (text, message) => {
    expect(refusal(text)).toContain(message);
  });

  test.each([
    ['{"x":{"y z/~":9007199254740993}}', '/x/y z~1~0', 'y z/~'],
    ['{"a":1,"b":{"c":[1,"2",12345678901234567891]}}', '/b/c/2', undefined],
    ['{"a":{"b":1},"c":-9007199254740993}', '/c', 'c'],
    ['[{"k\\"":1},123456789012345678]', '/1', undefined],
  ])('when %s is refused, then the error points at the number, and names its key', (text, pointer, key) => {
    try {
      parseJsonExactly(text);
    } catch (err) {
      const [field] = (err as HttpError).errors ?? [];
      expect(field).toMatchObject({ in: 'body', pointer, rule: 'exactInteger' });
      expect(err instanceof HttpError && err.message).toContain(key === undefined ? 'at position' : `in property '${key}'`);
      return;
    }
    throw new Error(`expected ${text} to be refused`);
  });

  test('when a value or a key holds an unpaired surrogate, then the body is refused', () => {
    // Written as it is in the text, not as an escape.
    expect(refusal('{"name":"a\uDC00b"}')).toContain("Body property 'name' contains an unpaired");
    expect(refusal('{"name":"\\udc00"}')).toBe(
      "Body property 'name' contains an unpaired UTF-16 surrogate, which is not valid Unicode text",
    );
    expect(refusal('{"\\ud800":1}')).toContain("Body property '\uD800'");
    expect(refusal('"\\ud800"')).toContain('The request body contains an unpaired');
  });

  test('when the body is not JSON, then it is refused as malformed_json', () => {
    expect(() => parseJsonExactly('{')).toThrow(expect.objectContaining({ status: 400, code: 'malformed_json' }));
  });
});
