import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { parse } from 'yaml';
import { petStatusValues } from '../../../generated/openapi';
import { projectRoot } from '../../../src/paths';
import { MAX_FILTER_BYTES, createCursorCodec } from '../../../src/store/pets/cursors';

// The page cursor's format, alone: what the service issues always fits the spec's bounds, reads
// back as the position it names, and nothing else reads as a position.
const doc = parse(readFileSync(path.join(projectRoot, 'spec', 'openapi.yaml'), 'utf8')) as Record<string, any>;
const cursorSchema = (doc.paths['/pets'].get.parameters as { name: string; schema: { maxLength: number; pattern: string } }[]).find(
  (p) => p.name === 'cursor',
)?.schema;
const codec = createCursorCodec(randomBytes(32));
const position = fc.record({
  afterId: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  status: fc.constantFrom(undefined, ...petStatusValues, 'x'.repeat(MAX_FILTER_BYTES)),
});

describe('page cursors (src/store/pets/cursors.ts)', () => {
  test("when any position is encoded, then the cursor meets the spec's pattern and maxLength and decodes to that position", () => {
    if (!cursorSchema) throw new Error('the spec has no cursor parameter on GET /pets');
    fc.assert(
      fc.property(position, (p) => {
        const cursor = codec.encode(p);
        expect(cursor).toMatch(new RegExp(cursorSchema.pattern));
        expect(cursor.length).toBeLessThanOrEqual(cursorSchema.maxLength);
        expect(codec.decode(cursor)).toEqual(p);
      }),
    );
  });

  test('when a cursor is decoded with another key, or changed in any one character, then it reads as nothing', () => {
    const stranger = createCursorCodec(randomBytes(32));
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    fc.assert(
      fc.property(position, fc.nat(), fc.integer({ min: 1, max: 63 }), (p, at, shift) => {
        const cursor = codec.encode(p);
        expect(stranger.decode(cursor)).toBeUndefined();
        const i = at % cursor.length;
        const changed = `${cursor.slice(0, i)}${alphabet[(alphabet.indexOf(cursor[i] as string) + shift) % 64]}${cursor.slice(i + 1)}`;
        expect(codec.decode(changed)).toBeUndefined();
      }),
    );
  });

  test('when a filter longer than a cursor holds or an id that is not a safe integer is encoded, then it throws', () => {
    expect(() => codec.encode({ afterId: 1, status: 'x'.repeat(MAX_FILTER_BYTES + 1) })).toThrow(RangeError);
    expect(() => codec.encode({ afterId: 2 ** 53, status: undefined })).toThrow(RangeError);
    expect(() => codec.encode({ afterId: -1, status: undefined })).toThrow(RangeError);
  });
});
