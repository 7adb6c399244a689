// Loaded into each process of the soak's instances, and nowhere else (the soak's NODE_OPTIONS --require this file):
// on SIGURG, the collection V8 runs when memory is short (the inspector's HeapProfiler.collectGarbage, through an
// in-process session: no port opens), then what the process keeps after it, written as kept.<pid>.json into its
// diagnostic report directory for the soak to read. Between two collections a process's RSS includes garbage V8 has
// not collected yet and heap space it keeps for what comes next, as much as its heuristics choose; after this one it
// does not, so the soak's memory check compares these readings, taken at the run's middle and at its end.
// Plain CommonJS: the instances run the built service (dist/) with the Node that runs the soak, nothing transforms it.
'use strict';
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
const { Session } = require('node:inspector');
const path = require('node:path');
const process = require('node:process');
const { setImmediate, setTimeout } = require('node:timers');

/**
 * V8 returns the pages a collection emptied from a background thread, later on a loaded machine: the reading is taken
 * at least MIN_SETTLE_MS after the collection, once the process's anonymous memory has stopped falling (by less than
 * SETTLED_BYTES over STEP_MS), and at most MAX_SETTLE_MS after it.
 */
const MIN_SETTLE_MS = 250;
const STEP_MS = 100;
const SETTLED_BYTES = 256 * 1024;
const MAX_SETTLE_MS = 1500;
const dir = process.report && process.report.directory;

/**
 * The process's anonymous resident memory (Linux's RssAnon), or its whole RSS where there is none: what it keeps. Its
 * whole RSS also counts the pages of its binary and libraries it has touched, which the kernel drops and reads again
 * as memory is needed elsewhere, by tens of MiB on a busy machine, whatever the process keeps.
 */
function keptRss() {
  try {
    const kb = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (kb) return Number(kb[1]) * 1024;
  } catch {
    // Not Linux: the whole RSS.
  }
  return process.memoryUsage.rss();
}

/** Calls `done` once keptRss() has stopped falling. */
function settled(done) {
  const started = Date.now();
  let last = keptRss();
  const step = () => {
    const now = keptRss();
    const waited = Date.now() - started;
    if ((waited >= MIN_SETTLE_MS && last - now < SETTLED_BYTES) || waited >= MAX_SETTLE_MS) return done(now);
    last = now;
    setTimeout(step, STEP_MS);
  };
  setTimeout(step, STEP_MS);
}

if (dir) {
  process.on('SIGURG', () => {
    const session = new Session();
    session.connect();
    session.post('HeapProfiler.collectGarbage', () => {
      // Not from within this callback: V8 answers it holding a lock its agent's teardown takes (a deadlock).
      setImmediate(() => session.disconnect());
      settled((rss) => {
        const { heapUsed, heapTotal, external } = process.memoryUsage();
        const file = path.join(dir, `kept.${process.pid}.json`);
        // Renamed into place once written: the soak never reads half a file.
        writeFileSync(`${file}.part`, JSON.stringify({ rss, heapUsed, heapTotal, external }));
        renameSync(`${file}.part`, file);
      });
    });
  });
}
