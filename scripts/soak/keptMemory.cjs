// Loaded into each process of the soak's instances, and nowhere else (the soak's NODE_OPTIONS --require this file):
// on SIGURG, the collection V8 runs when memory is short (the inspector's HeapProfiler.collectGarbage, through an
// in-process session: no port opens), then what the process keeps after it, written as kept.<pid>.json into its
// diagnostic report directory for the soak to read. Between two collections a process's RSS includes garbage V8 has
// not collected yet and heap space it keeps for what comes next, as much as its heuristics choose; after this one it
// does not, so the soak's memory check compares these readings, taken at the run's middle and at its end.
// Plain CommonJS: the instances run the built service (dist/) with the Node that runs the soak, nothing transforms it.
'use strict';
const { renameSync, writeFileSync } = require('node:fs');
const { Session } = require('node:inspector');
const path = require('node:path');
const process = require('node:process');
const { setImmediate, setTimeout } = require('node:timers');

/** V8 returns the pages a collection emptied from a background thread: the reading waits this long after it. */
const SETTLE_MS = 250;
const dir = process.report && process.report.directory;

if (dir) {
  process.on('SIGURG', () => {
    const session = new Session();
    session.connect();
    session.post('HeapProfiler.collectGarbage', () => {
      // Not from within this callback: V8 answers it holding a lock its agent's teardown takes (a deadlock).
      setImmediate(() => session.disconnect());
      setTimeout(() => {
        const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
        const file = path.join(dir, `kept.${process.pid}.json`);
        // Renamed into place once written: the soak never reads half a file.
        writeFileSync(`${file}.part`, JSON.stringify({ rss, heapUsed, heapTotal, external }));
        renameSync(`${file}.part`, file);
      }, SETTLE_MS);
    });
  });
}
