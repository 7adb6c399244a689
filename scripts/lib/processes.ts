import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { projectRoot } from '../../src/paths';
import { connect } from '../../src/store/database/db';

/** A database of its own on the server `adminUrl` names (a copy of `template`, when given), dropped by `drop()`. */
export async function scratchDatabase(
  adminUrl: string,
  prefix: string,
  { template }: { template?: string } = {},
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = connect(adminUrl, { max: 1 });
  try {
    await admin.unsafe(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const again = connect(adminUrl, { max: 1 });
      try {
        await again.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await again.end();
      }
    },
  };
}

/** Runs a command to completion (asynchronously), failing with its output. */
export function runToEnd(command: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolve, reject) => {
    const [file = '', ...args] = command;
    const child = spawn(file, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command.join(' ')} exited ${code}:\n${out}`))));
  });
}

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** The last `bytes` of a file. */
function tailOf(path: string, bytes = 65_536): string {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(bytes, size));
    const n = readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export interface StartOptions {
  /**
   * Where its output goes. Default: a pipe this process reads. A server under load logs a
   * line per request: the bench sends them to a file instead, so that its load generator,
   * which shares this process, does not spend its time reading them.
   */
  logFile?: string;
}

/** Spawns `command` (a server that logs "listening on <url>") and waits until it listens. */
export async function startServerProcess(
  command: string[],
  env: NodeJS.ProcessEnv,
  { logFile }: StartOptions = {},
): Promise<ServerProcess> {
  const sink = logFile === undefined ? 'pipe' : openSync(logFile, 'a');
  const [file = '', ...args] = command;
  const child = spawn(file, args, { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', sink, sink] });
  if (typeof sink === 'number') closeSync(sink); // the child has its own descriptor
  // What it printed, its last 64 KiB.
  let text = '';
  const keep = (c: Buffer) => {
    text += c.toString();
    if (text.length > 131_072) text = text.slice(-65_536);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const output = logFile === undefined ? () => text : () => tailOf(logFile);
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const baseUrl = await waitUntilListening(child, output);
    return { child, baseUrl, output, stop: () => (child.kill('SIGTERM'), exit) };
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${command.join(' ')} ${(err as Error).message}`);
  }
}

/**
 * Waits for a spawned server's "listening on <url>" line (the product, the mock and the bench's
 * baselines all print one) and resolves with the URL; rejects if it exits first or takes a minute.
 */
export async function waitUntilListening(child: ChildProcess, output: () => string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = /listening on (http:\/\/[^\s"]+)/.exec(output());
    if (match) return match[1] as string;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`did not start:\n${output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The product as production runs it: the build in dist/, started with node. */
export async function startProduct(env: NodeJS.ProcessEnv, options?: StartOptions): Promise<ServerProcess> {
  return startServerProcess([process.execPath, 'dist/src/main.js'], { PORT: '0', ...env }, options);
}

/** The process ids whose parent is `pid`, read from /proc (Linux). */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        // /proc/PID/stat: "pid (comm) state ppid …"; comm may contain spaces, so read after the last ')'.
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A TCP port free on the loopback interface right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A RATE_LIMIT no load run here can reach: the limiter still counts every request, as in production. */
export const UNREACHABLE_RATE_LIMIT = '999999999/1h';

/** `--name N` from the command line: a positive integer, or `fallback` when absent. */
export function positiveIntegerOption(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(argv[i + 1]);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
}

/** Calls `fn` every `everyMs` until it returns true; resolves with the milliseconds that took. */
export async function waitFor(fn: () => Promise<boolean>, { timeoutMs = 30_000, everyMs = 25 } = {}): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await fn()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`not true after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
