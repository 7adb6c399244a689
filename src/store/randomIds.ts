import { randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Bytes from the operating system's random source, drawn 4 KiB at a time and handed out in order,
 * as Node's own randomUUID keeps its bytes: one randomFillSync for about 80 event ids rather than
 * one for each (a create spent 15.6 µs of its CPU in it: docs/performance.md). Each byte is handed
 * out once. For identifiers; a key's secret is drawn fresh (keys/format.ts).
 */
const pool = Buffer.alloc(4096);
let next = pool.length;

function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++] as number;
}

/** `length` base62 characters, each uniformly drawn (bytes of 248 and above are skipped: 248 = 4 × 62). */
export function randomId(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}
