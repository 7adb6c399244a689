import { execFileSync, spawn } from 'node:child_process';
import { constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { gatheredDestination } from '../../../src/ops/logger';
import { createMetrics } from '../../../src/ops/metrics';

// The production log destination when stdout is not read (a stuck pipe, a collector gone): what waits to be written is
// bounded (LOG_BUFFER.maxLength), and what does not fit is dropped whole lines at a time and counted. stdout here is a
// FIFO nobody reads at first, opened as a process's stdout would be, non-blocking: a full pipe refuses writes (EAGAIN).
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'animal-store-log-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('when stdout is not read, then what waits is bounded, and every line is either written whole, in order, or counted as dropped', async () => {
  const fifo = path.join(dir, 'stdout');
  execFileSync('mkfifo', [fifo]);
  // Read and write, so that opening it needs no reader yet (Linux); the pipe holds 64 KiB.
  const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  const maxLength = 64 * 1024;
  const target = pino.destination({ fd, sync: false, minLength: 0, maxLength });
  let dropped = 0;
  const d = gatheredDestination(target, { minLength: 4096, periodicFlush: 60_000 }, (lines) => (dropped += lines));
  const lines = Array.from({ length: 4000 }, (_, i) => `{"line":${i},"pad":"${'x'.repeat(60 + (i % 13))}"}\n`);
  for (const line of lines) d.write(line);
  // About 330 KiB written at once: sonic-boom queued 64 KiB (maxLength) behind its first write, and dropped the rest.
  expect(dropped).toBeGreaterThan(1_000);
  expect(dropped).toBeLessThan(lines.length);

  // A reader comes: what was kept is written, and nothing more is lost.
  const reader = spawn('cat', [fifo]);
  let out = '';
  reader.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = new Promise((resolve) => reader.on('exit', resolve));
  const flushing = d as unknown as { flush(cb: (err?: Error) => void): void };
  await new Promise<void>((resolve, reject) => flushing.flush((err) => (err ? reject(err) : resolve())));
  // Written to the end, the descriptor closed: the reader sees the end of the pipe.
  await new Promise((resolve) => (target.once('close', resolve), target.end()));
  await exited;
  const read = out.split('\n').filter((l) => l !== '');
  const numbers = read.map((l) => (JSON.parse(l) as { line: number }).line);
  expect(read.length + dropped).toBe(lines.length);
  expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
  expect(new Set(numbers).size).toBe(numbers.length);
  // The first lines are kept (the dropping starts once the queue is full).
  expect(numbers[0]).toBe(0);
});

test('when lines were dropped, then the metrics count them', async () => {
  let dropped = 0;
  const metrics = createMetrics({ queriesInFlight: () => 0, logLinesDropped: () => dropped });
  expect(await metrics.registry.metrics()).toContain('animal_store_log_lines_dropped_total 0');
  dropped = 120;
  expect(await metrics.registry.metrics()).toContain('animal_store_log_lines_dropped_total 120');
  dropped = 125;
  expect(await metrics.registry.metrics()).toContain('animal_store_log_lines_dropped_total 125');
});
