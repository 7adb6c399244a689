import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type KeptReading, keptReading, rssMiB, soakNodeOptions } from '../../../scripts/soak/instances';

// The soak's memory check compares what each process keeps after the collection V8 runs when memory is short
// (scripts/soak/keptMemory.cjs, loaded by the soak's node options and asked with SIGURG). The reading must see past
// garbage not collected yet, which RSS read at any moment includes, and must see what a process does keep.

/**
 * A process that makes garbage all the time (each batch kept a while, so that some of it lives) until told to be
 * quiet, which drops it all; and, when told, keeps 48 MiB: 32 in Buffers, 16 in typed arrays.
 */
const PROGRAM = `
  const kept = [];
  let garbage = [];
  const churn = setInterval(() => {
    garbage.push(Array.from({ length: 5000 }, (_, i) => ({ i, s: 'x' + i })));
    if (garbage.length > 200) garbage = [];
  }, 2);
  process.on('message', (m) => {
    if (m === 'quiet') {
      clearInterval(churn);
      garbage = [];
    } else {
      for (let i = 0; i < 32; i++) kept.push(Buffer.alloc(1 << 20, i + 1));
      for (let i = 0; i < 16; i++) kept.push(new Float64Array(1 << 17).fill(i + 1));
    }
    process.send(m);
  });
  process.send('ready');
`;

let dir: string;
let child: ChildProcess;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const said = (what: string) => new Promise<void>((resolve) => child.on('message', (m) => m === what && resolve()));

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'animal-store-kept-'));
  child = spawn(process.execPath, ['-e', PROGRAM], {
    env: { ...process.env, NODE_OPTIONS: soakNodeOptions(dir) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await said('ready');
  // A few seconds of garbage: V8 grows its heap for it.
  await sleep(3_000);
});
afterAll(() => {
  child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe("the soak's kept-memory reading", () => {
  test('when a process has made garbage it no longer holds, then what it keeps after the collection is less than its RSS read before it, and the reading leaves no file', async () => {
    // Quiet first: while it churns, what lives goes up and down by tens of MiB in well under a second (its batches
    // are all dropped once there are 200), so RSS read before the reading and what the reading finds living were two
    // moments apart (CI: 125 MiB read, 132.3 kept). Quiet, nothing it made lives and nothing new is made; the garbage
    // is still there.
    child.send('quiet');
    await said('quiet');
    const pid = child.pid as number;
    // Its anonymous RSS, as the reading reports it: the whole RSS also counts the binary's pages, always above it.
    const asRead = rssMiB(pid, 'RssAnon');
    const kept = await keptReading(pid, dir);
    expect(kept).toBeDefined();
    expect((kept as KeptReading).rssMiB).toBeLessThan(asRead);
    expect((kept as KeptReading).heapUsedMiB).toBeGreaterThan(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  test('when the process, quiet now, then keeps 48 MiB, then the next reading has grown by about that much', async () => {
    // Quiet (again, so that this case stands alone): its batches of garbage live for a while, and how much of them
    // lives at a reading (up to tens of MiB) would hide what it keeps.
    child.send('quiet');
    await said('quiet');
    const pid = child.pid as number;
    const before = await keptReading(pid, dir);
    child.send('keep');
    await said('keep');
    const after = await keptReading(pid, dir);
    expect(before).toBeDefined();
    expect(after).toBeDefined();
    const grown = (after as KeptReading).rssMiB - (before as KeptReading).rssMiB;
    expect(grown).toBeGreaterThan(40);
    expect(grown).toBeLessThan(64);
    expect((after as KeptReading).externalMiB - (before as KeptReading).externalMiB).toBeGreaterThan(40);
  });

  test('when the process is gone, then there is no reading, at once', async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const started = Date.now();
    expect(await keptReading(child.pid as number, dir)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
