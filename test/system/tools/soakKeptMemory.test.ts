import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type KeptReading, keptReading, rssMiB, soakNodeOptions } from '../../../scripts/soak/instances';

// The soak's memory check compares what each process keeps after the collection V8 runs when memory is short
// (scripts/soak/keptMemory.cjs, loaded by the soak's node options and asked with SIGURG). The reading must see past
// garbage not collected yet, which RSS read at any moment includes, and must see what a process does keep.

/** A process that makes garbage all the time and, when told, keeps 48 MiB: 32 in Buffers, 16 in JavaScript arrays. */
const PROGRAM = `
  const kept = [];
  let garbage = [];
  setInterval(() => {
    garbage.push(Array.from({ length: 5000 }, (_, i) => ({ i, s: 'x' + i })));
    if (garbage.length > 200) garbage = [];
  }, 2);
  process.on('message', () => {
    for (let i = 0; i < 32; i++) kept.push(Buffer.alloc(1 << 20, i));
    for (let i = 0; i < 16; i++) kept.push(new Float64Array(1 << 17).fill(i));
    process.send('kept');
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
  let before: KeptReading;

  test('when a process makes garbage, then what it keeps after the collection is less than its RSS read before it, and the reading leaves no file', async () => {
    const pid = child.pid as number;
    const asRead = rssMiB(pid);
    const kept = await keptReading(pid, dir);
    expect(kept).toBeDefined();
    before = kept as KeptReading;
    expect(before.rssMiB).toBeLessThan(asRead);
    expect(before.heapUsedMiB).toBeGreaterThan(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  test('when the process then keeps 48 MiB, then the next reading has grown by about that much', async () => {
    child.send('keep');
    await said('kept');
    const after = await keptReading(child.pid as number, dir);
    expect(after).toBeDefined();
    const grown = (after as KeptReading).rssMiB - before.rssMiB;
    expect(grown).toBeGreaterThan(40);
    expect(grown).toBeLessThan(64);
    expect((after as KeptReading).externalMiB - before.externalMiB).toBeGreaterThan(30);
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
