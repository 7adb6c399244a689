import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { gatheredDestination } from '../../../src/ops/logger';

// The production log destination: lines gathered into batches in front of sonic-boom, which
// writes them to a real file here. Every line must arrive, in order, within the flush period.
let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'animal-store-log-'));
  file = path.join(dir, 'out.log');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const target = () => pino.destination({ dest: file, sync: false, minLength: 0, mkdir: true });
const ready = (t: ReturnType<typeof target>) => new Promise((resolve) => t.once('ready', resolve));
const written = () => readFileSync(file, 'utf8');
/** Resolves with the time at which `done()` first held, checked every 2 ms (jest's timeout bounds the wait). */
const whenTrue = async (done: () => boolean) => {
  while (!done()) await new Promise((r) => setTimeout(r, 2));
  return Date.now();
};

test('when lines shorter than a batch are written, then they reach the file only at the periodic flush, all of them, in order', async () => {
  const t = target();
  await ready(t);
  const created = Date.now();
  const d = gatheredDestination(t, { minLength: 4096, periodicFlush: 100 });
  for (let i = 0; i < 10; i++) d.write(`{"n":${i}}\n`);
  // The lines arrive, all at once: no earlier than the first flush, 100 ms after the destination
  // was made (a timer never fires early by more than the millisecond Node rounds to; a busy
  // machine only makes it later).
  const arrived = await whenTrue(() => written() !== '');
  expect(arrived - created).toBeGreaterThanOrEqual(99);
  expect(written()).toBe(Array.from({ length: 10 }, (_, i) => `{"n":${i}}\n`).join(''));
});

test('when a batch fills, then it is handed over at once, and flushSync writes the rest in order', async () => {
  const t = target();
  await ready(t);
  const d = gatheredDestination(t, { minLength: 64, periodicFlush: 60_000 });
  const lines = Array.from({ length: 50 }, (_, i) => `{"line":${i},"pad":"${'x'.repeat(i % 7)}"}\n`);
  lines.forEach((l) => d.write(l));
  // Everything but the last, unfilled batch is on its way without a timer (the flush is a minute away).
  await whenTrue(() => written().length > lines.join('').length - 64);
  (d as unknown as { flushSync(): void }).flushSync();
  expect(written()).toBe(lines.join(''));
});
