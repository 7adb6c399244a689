import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { projectRoot } from '../../../src/paths';

// postgres.js's queue (its pool's connections by state, each connection's pipeline), as the patch leaves it
// (patches/README.md, postgres): shift() let go of the places it emptied only when the queue became empty, so a queue
// seldom empty under load grew by one place per shift and remove() scanned all of them. The file is the patched one
// postgres.js itself runs; its package exports only its index, so it is read by path.
type Queue<T> = { readonly length: number; push(x: T): T; shift(): T | undefined; remove(x: T): T | null };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Queue = require(path.join(projectRoot, 'node_modules/postgres/cjs/src/queue.js')) as <T>() => Queue<T>;

test('when items are pushed, shifted and removed at random past many compactions, then the queue answers as an array would', () => {
  const queue = Queue<number>();
  const model: number[] = [];
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  // The first answer that differs from the array's, if any (checked without expect: 50,000 steps).
  let differs: string | undefined;
  for (let n = 0; n < 50_000 && !differs; n++) {
    const r = random();
    let got: unknown;
    let want: unknown;
    // Pushes a little more often than shifts, so that the queue is seldom empty and compacts.
    if (r < 0.52 || model.length === 0) [got, want] = [queue.push(n), model.push(n) && n];
    else if (r < 0.97) [got, want] = [queue.shift(), model.shift()];
    else {
      // Something queued, or something already shifted out (found nowhere, as in the pool's move()).
      const x = random() < 0.5 ? model[Math.floor(random() * model.length)]! : n - 25_000;
      const at = model.indexOf(x);
      [got, want] = [queue.remove(x), at === -1 ? null : model.splice(at, 1)[0]];
    }
    if (got !== want || queue.length !== model.length)
      differs = `step ${n}: ${String(got)} for ${String(want)}, length ${queue.length} for ${model.length}`;
  }
  expect(differs).toBeUndefined();
  const rest: (number | undefined)[] = [];
  while (queue.length) rest.push(queue.shift());
  expect(rest).toEqual(model);
});

test('when a queue is never empty through two million shifts, then it does not keep the places it emptied', () => {
  // What the queue keeps, not the garbage it left: the heap is measured after a full collection each time (Node's
  // documented flag, set at run time; a collection is otherwise whenever V8 decides, and Node 24 waits longer).
  setFlagsFromString('--expose-gc');
  const collect = runInNewContext('gc') as () => void;
  const queue = Queue<object>();
  queue.push({});
  queue.push({});
  collect();
  const before = process.memoryUsage().heapUsed;
  // Two queued, one shifted and pushed back each time: as a pool's busy connections under constant load.
  for (let n = 0; n < 2_000_000; n++) queue.push(queue.shift()!);
  collect();
  const kept = process.memoryUsage().heapUsed - before;
  // Before the patch the array kept a place for every shift: 8 bytes each, 22 MiB here (with it: none).
  expect(kept).toBeLessThan(4 * 2 ** 20);
  expect(queue.length).toBe(2);
});
