import { readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { type ServerProcess, childrenOf, freePort, startProduct } from '../lib/processes';
import { send } from './traffic';

/** One instance of the service (a cluster primary and its workers) on a port that stays its own across restarts. */
export interface Instance {
  name: string;
  origin: string;
  /** The primary's process id and its workers'. */
  pids(): number[];
  /** `kill -9` of the primary and every worker at once, then started again on the same port. */
  killAndRestart(): Promise<void>;
  stop(): Promise<number | null>;
}

export async function startInstance(name: string, env: NodeJS.ProcessEnv, logFile: string): Promise<Instance> {
  const port = await freePort();
  let server: ServerProcess = await startProduct({ ...env, PORT: String(port) }, { logFile });
  let stopped = false;
  const pids = () => (server.child.pid ? [server.child.pid, ...childrenOf(server.child.pid)] : []);
  return {
    name,
    origin: `http://127.0.0.1:${port}`,
    pids,
    async killAndRestart() {
      const exited = new Promise((resolve) => server.child.once('exit', resolve));
      for (const pid of pids()) process.kill(pid, 'SIGKILL');
      await exited;
      server = await startProduct({ ...env, PORT: String(port) }, { logFile });
      // Stopped (Ctrl-C) while it was starting again: the new process is stopped too, not left behind.
      if (stopped) await server.stop();
    },
    stop: () => {
      stopped = true;
      return server.stop();
    },
  };
}

const RSS_LINES = { VmRSS: /VmRSS:\s+(\d+)/, RssAnon: /RssAnon:\s+(\d+)/ };

/** Resident memory of a process, in MiB (0 once it is gone): all of it, or its anonymous part (what keptReading reads). */
export function rssMiB(pid: number, part: keyof typeof RSS_LINES = 'VmRSS'): number {
  try {
    const kb = RSS_LINES[part].exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** One reading of a process's RSS: when (ms since the epoch) and how much (MiB). */
export interface RssReading {
  at: number;
  mib: number;
}

/**
 * Every process's readings by `read`, by pid, every `everyMs` while the run lasts (a round is not begun while the last
 * one runs; a process that gave none, gone, is skipped): the series the report reads a trend from.
 */
function recordEach<T>(instances: () => Instance[], everyMs: number, read: (pid: number) => Promise<T | undefined>) {
  const series = new Map<number, T[]>();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      for (const pid of instances().flatMap((i) => i.pids())) {
        const reading = await read(pid);
        if (reading === undefined) continue;
        const readings = series.get(pid) ?? [];
        readings.push(reading);
        series.set(pid, readings);
      }
    })().finally(() => (busy = false));
  }, everyMs);
  return { series, stop: () => clearInterval(timer) };
}

/** Every process's RSS, read every `everyMs`. */
export const recordRss = (instances: () => Instance[], everyMs: number) =>
  recordEach<RssReading>(instances, everyMs, (pid) => {
    const mib = rssMiB(pid);
    return Promise.resolve(mib === 0 ? undefined : { at: Date.now(), mib });
  });

/**
 * What a process's diagnostic report says of its memory, in MiB: V8's heap in use and its size, memory held for
 * JavaScript outside it (Buffers), and the libuv handles it has open (sockets, timers). RSS alone cannot tell a
 * growing heap from a growing allocator or a growing count of sockets.
 */
export interface HeapReading {
  at: number;
  usedMiB: number;
  /** The heap's size as V8 holds it (used or not): what of the heap RSS can see. */
  totalMiB: number;
  externalMiB: number;
  handles: number;
}

/**
 * The node options the soak gives every process of an instance: a diagnostic report written into `dir` on SIGUSR2,
 * and (keptMemory.cjs) what it keeps after the collection V8 runs when memory is short written there on SIGURG.
 */
export const soakNodeOptions = (dir: string) =>
  `--report-on-signal --report-signal=SIGUSR2 --report-compact --report-directory=${dir} --require ${path.join(__dirname, 'keptMemory.cjs')}`;

const MIB = 1024 * 1024;

/**
 * Sends `signal` to `pid` and waits (3 s at most) for the file `ours` picks in `dir`, written by the process itself:
 * its parse, the file deleted. Undefined when none came, or the process is gone.
 */
async function answerTo<T>(pid: number, signal: NodeJS.Signals, dir: string, ours: (file: string) => boolean): Promise<T | undefined> {
  try {
    process.kill(pid, signal);
  } catch {
    return undefined;
  }
  for (const deadline = Date.now() + 3_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const file = readdirSync(dir).find(ours);
    if (!file) continue;
    let parsed: T;
    try {
      parsed = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as T;
    } catch {
      // A report is written in one go but not atomically: one still being written does not parse yet.
      continue;
    }
    rmSync(path.join(dir, file), { force: true });
    return parsed;
  }
  return undefined;
}

/**
 * One reading of `pid`'s heap: a SIGUSR2 asks it for its report (written into `dir` by the process itself, in a few
 * ms), which is read and deleted (it lists the environment, keys included). Undefined when none came within 3 s.
 */
export async function heapReading(pid: number, dir: string): Promise<HeapReading | undefined> {
  type Report = { javascriptHeap?: { usedMemory?: number; totalMemory?: number; externalMemory?: number }; libuv?: unknown[] };
  const report = await answerTo<Report>(
    pid,
    'SIGUSR2',
    dir,
    (f) => f.startsWith('report.') && f.includes(`.${pid}.0.`) && f.endsWith('.json'),
  );
  if (!report) return undefined;
  const heap = report.javascriptHeap ?? {};
  return {
    at: Date.now(),
    usedMiB: Math.round((heap.usedMemory ?? 0) / MIB),
    totalMiB: Math.round((heap.totalMemory ?? 0) / MIB),
    externalMiB: Math.round((heap.externalMemory ?? 0) / MIB),
    handles: report.libuv?.length ?? 0,
  };
}

/**
 * What a process keeps after the collection V8 runs when memory is short (all garbage, heap space it kept for what
 * comes next returned), in MiB: its anonymous RSS once it has stopped falling (keptMemory.cjs), and of it V8's heap in
 * use and external memory.
 */
export interface KeptReading {
  rssMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
}

/**
 * `pid`'s memory after that collection (keptMemory.cjs, asked with SIGURG; it pauses the process for the collection,
 * tens of ms, and answers within 1.5 s of it). Undefined when no answer came within 3 s.
 */
export async function keptReading(pid: number, dir: string): Promise<KeptReading | undefined> {
  const kept = await answerTo<Record<'rss' | 'heapUsed' | 'external', number>>(pid, 'SIGURG', dir, (f) => f === `kept.${pid}.json`);
  const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;
  return kept && { rssMiB: mib(kept.rss), heapUsedMiB: mib(kept.heapUsed), externalMiB: mib(kept.external) };
}

/** Every process's heap reading (its diagnostic report, written into `dir`), every `everyMs`. */
export const recordHeap = (instances: () => Instance[], everyMs: number, dir: string) =>
  recordEach(instances, everyMs, (pid) => heapReading(pid, dir));

/**
 * The event loop's delay as the workers measure it (prom-client's `nodejs_eventloop_lag_p99_seconds`), in ms: the
 * highest of `tries` scrapes, each on a new connection, which the cluster hands to its workers in turn.
 */
export async function eventLoopP99Ms(origin: string, metricsToken: string, tries = 6): Promise<number | undefined> {
  let worst: number | undefined;
  for (let i = 0; i < tries; i++) {
    const a = await send(`${origin}/metrics`, { headers: { Authorization: `Bearer ${metricsToken}`, Connection: 'close' } }, 5_000);
    const value = typeof a.body === 'string' ? /^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(a.body)?.[1] : undefined;
    if (value !== undefined) worst = Math.max(worst ?? 0, Number(value) * 1000);
  }
  return worst === undefined ? undefined : Math.round(worst * 10) / 10;
}

/** Waits until the instance answers a list with 200 (`key`'s), as a client sees it serving; returns how long that took. */
export async function serving(instance: Instance, key: string, timeoutMs: number): Promise<number | undefined> {
  const started = Date.now();
  for (let inARow = 0; inARow < 4;) {
    if (Date.now() - started > timeoutMs) return undefined;
    const a = await send(`${instance.origin}/v1/pets?limit=1`, { headers: { Authorization: `Bearer ${key}`, Connection: 'close' } }, 5_000);
    inARow = a.status === 200 ? inARow + 1 : 0;
    if (inARow === 0) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return Date.now() - started;
}
