/**
 * npm run bench:profile [-- --duration S] [--pets N] [--top N] [--contestant product|bare|bare-born|fastify] [--scenario N|mcp] [--connections N] [--threads] [--env NAME=VALUE]…
 *
 * Where a server's CPU goes, scenario by scenario: the built product (as production runs it, as
 * in `npm run bench`), the bare floor (`bare-born`: on the product's server) or fastify is started under
 * `node --cpu-prof`, loaded with one of the bench's scenarios (--connections, 50) for --duration seconds (10) after
 * a 3 s warm-up, and stopped; the samples
 * of the loaded window are attributed, by the code on top of the stack, to the package (or
 * Node's own code, our src/ folders, garbage collection) they ran in. Prints, per scenario, the
 * sampled busy CPU per request and each part's µs per request; the same time by owner (each sample charged
 * to the nearest package or src/ folder on its stack, so that express, the log line and postgres.js are each
 * counted with what they call in Node and V8); and the functions with the most time of their own.
 * `--scenario mcp`: the product with MCP_ENABLED=true, loaded with the MCP section's tool call (mcp.ts). The profiler's own overhead is in the figures: compare within a table.
 * `--threads`: no profiler; the process's CPU per request by thread over the loaded window (threadCpuMicros), the
 * JavaScript thread apart from V8's garbage collection and compiler workers that a CPU profile does not sample.
 * `--env NAME=VALUE` (repeatable): a setting of the server's over the bench's, such as `DATABASE_POOL_SIZE=2` or `LOG_LEVEL=warn`.
 * `--keep DIR`: each scenario's `.cpuprofile` copied into DIR (named by contestant and scenario), to open in DevTools (not with --threads).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { type ServerProcess, positiveIntegerOption, runToEnd, startServerProcess } from '../lib/processes';
import { SCENARIOS, type Scenario, seededBenchDatabase, statusCounts, threadCpuMicros } from './measure';
import { MCP_TOOL_CALL } from './mcp';
import { scratchServerUrl } from '../lib/database';
import { runTool } from '../lib/tool';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Which part of the process a frame's code belongs to. */
function partOf(url: string, functionName: string): string {
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(program)' || functionName === '(root)') return 'V8 and native (program)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1] as string;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] === 'internal' ? url.slice(14).split('/')[0] : url.slice(5)}`;
  const ours = /\/dist\/(src|scripts)\/([^/]+)/.exec(url);
  if (ours) return `${ours[1]}/${ours[2]}`.replace(/\.js$/, '');
  return url === '' ? `native: ${functionName}` : url;
}

/** express and the packages only it uses: what an API request pays for when it passes through express's app. */
const EXPRESS = new Set([
  'express',
  'router',
  'body-parser',
  'finalhandler',
  'on-finished',
  'parseurl',
  'encodeurl',
  'escape-html',
  'statuses',
  'type-is',
  'content-type',
  'accepts',
  'negotiator',
  'mime-types',
  'fresh',
  'etag',
  'proxy-addr',
  'forwarded',
  'qs',
  'depd',
  'debug',
  'vary',
  'http-errors',
  'setprototypeof',
  'ee-first',
  'path-to-regexp',
  'send',
  'serve-static',
  'range-parser',
  'cookie',
  'cookie-signature',
]);
/** The request log line: pino, its writer (sonic-boom) and our line writer and destination. */
const LOG = new Set([
  'pino',
  'sonic-boom',
  'src/ops/logger',
  'on-exit-leak-free',
  'quick-format-unescaped',
  'fast-redact',
  'pino-std-serializers',
]);

/**
 * Who a frame's time is charged to when its time and that of what it calls are counted together: the nearest frame
 * of the stack, from the top down, in a package or in our src/ (node's own code, V8 builtins and natives are charged
 * to their caller), grouped as express, the log line, postgres.js, our src/ folders; none: node:http and the runtime.
 */
function ownerOf(parts: string[]): string {
  for (const part of parts) {
    if (part.startsWith('node:') || part.startsWith('native: ') || part.startsWith('V8 ') || part === 'garbage collection') continue;
    if (EXPRESS.has(part)) return 'express (app, router, decoration)';
    if (LOG.has(part)) return 'the log line (pino, sonic-boom, src/ops/logger)';
    return part;
  }
  return parts[0] === 'garbage collection' ? 'garbage collection' : "node's own (http, net, timers) and V8 called by it";
}

/** Each profile node's parent. */
function parentsOf(profile: CpuProfile): Map<number, number> {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return parent;
}

/** A frame as the function table names it: with its file and line, or for code without a source (native, or made by `new Function`, as fast-json-stringify's serialisers are), the nearest caller that has one. */
function frameName(id: number, byId: Map<number, ProfileNode>, parent: Map<number, number>): string {
  const at = (frame: ProfileNode['callFrame']) => `${frame.url.replace(/^.*\/(node_modules|dist)\//, '')}:${frame.lineNumber + 1}`;
  const frame = byId.get(id)?.callFrame;
  if (!frame) return '(unknown)';
  const name = frame.functionName || '(anonymous)';
  if (frame.url) return `${name} ${at(frame)}`;
  for (let up = parent.get(id); up !== undefined; up = parent.get(up)) {
    const caller = byId.get(up)?.callFrame;
    if (caller?.url) return `${name} (from ${caller.functionName || '(anonymous)'} ${at(caller)})`;
  }
  return name;
}

/** Each profile node's owner (ownerOf), read from its whole stack once per node. */
function ownersOf(byId: Map<number, ProfileNode>, parent: Map<number, number>): (id: number) => string {
  const owners = new Map<number, string>();
  return (id) => {
    let known = owners.get(id);
    if (known === undefined) {
      const parts: string[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const frame = byId.get(at)?.callFrame;
        // Our log writer is a file of src/ops, told apart here: it is the log line's.
        if (frame) parts.push(frame.url.endsWith('/src/ops/logger.js') ? 'src/ops/logger' : partOf(frame.url, frame.functionName));
      }
      known = ownerOf(parts);
      owners.set(id, known);
    }
    return known;
  };
}

/** Self time per part and per function, and time per owner, within the last `seconds` of the profile (the loaded window). */
function attribute(profile: CpuProfile, seconds: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = parentsOf(profile);
  const ownerOfNode = ownersOf(byId, parent);
  let t = profile.startTime;
  const stamps = profile.timeDeltas.map((d) => (t += d));
  const end = stamps[stamps.length - 1] ?? t;
  const from = end - seconds * 1e6;
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  const owners = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const at = stamps[i] ?? 0;
    if (at < from) return;
    const interval = (stamps[i + 1] ?? at) - at;
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === '(idle)') return;
    busy += interval;
    const { url, functionName } = node.callFrame;
    const part = partOf(url, functionName);
    parts.set(part, (parts.get(part) ?? 0) + interval);
    const fn = frameName(id, byId, parent);
    functions.set(fn, (functions.get(fn) ?? 0) + interval);
    const owner = ownerOfNode(id);
    owners.set(owner, (owners.get(owner) ?? 0) + interval);
  });
  return { busy, parts, functions, owners };
}

/** The statuses a run was answered with, and how many of each (`200 × 110,726`): a profile of the wrong answer says so. */
function statusesOf(result: autocannon.Result): string {
  const parts = Object.entries(statusCounts(result)).map(([code, s]) => `${code} × ${s.count.toLocaleString('en')}`);
  const failed = result.errors + result.timeouts;
  return [...parts, ...(failed ? [`${failed} errors or timeouts`] : [])].join(', ') || 'no answers';
}

/**
 * One scenario's loaded window on a fresh server: `start` is started (under `--cpu-prof` with `profiled`),
 * loaded with `scenario` for 3 s of warm-up, then for `o.duration` seconds, and stopped. Returns the
 * process's CPU by thread over the loaded window and, with `profiled`, its CPU profile.
 */
async function loadedWindow(
  start: string[],
  env: NodeJS.ProcessEnv,
  scenario: Scenario,
  key: string,
  o: { duration: number; pets: number; connections: number; profiled: boolean; keepAs: string | undefined },
): Promise<{ profile: CpuProfile | undefined; threads: Map<string, number>; requests: number; statuses: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-profile-'));
  const [node = process.execPath, ...rest] = start;
  const profiler = o.profiled ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
  const server: ServerProcess = await startServerProcess([node, ...profiler, ...rest], env, { logFile: path.join(dir, 'server.log') });
  try {
    const pid = server.child.pid as number;
    const { path: requestPath = '', ...options } = scenario.request(key, o.pets);
    const url = `${new URL(server.baseUrl).origin}${requestPath}`;
    await autocannon({ url, connections: o.connections, duration: 3, ...options });
    const before = threadCpuMicros(pid);
    const result = await autocannon({ url, connections: o.connections, duration: o.duration, ...options });
    const threads = threadCpuMicros(pid, before);
    await server.stop();
    let profile: CpuProfile | undefined;
    if (o.profiled) {
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) throw new Error(`no profile was written:\n${server.output()}`);
      if (o.keepAs) copyFileSync(path.join(dir, file), o.keepAs);
      profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    }
    return { profile, threads, requests: result.requests.total, statuses: statusesOf(result) };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each `--env NAME=VALUE`: a setting of the profiled process's over the bench's (a pool size, a feature off). */
function settingsOf(argv: readonly string[]): Record<string, string> {
  const settings: Record<string, string> = {};
  argv.forEach((arg, i) => {
    if (argv[i - 1] !== '--env') return;
    const at = arg.indexOf('=');
    if (at < 1) throw new Error(`--env takes NAME=VALUE, got ${JSON.stringify(arg)}`);
    settings[arg.slice(0, at)] = arg.slice(at + 1);
  });
  return settings;
}

async function main(argv: string[]): Promise<number> {
  const adminUrl = scratchServerUrl('bench:profile');
  if (!adminUrl) return 2;
  const duration = positiveIntegerOption(argv, 'duration', 10);
  const pets = positiveIntegerOption(argv, 'pets', 100_000);
  const top = positiveIntegerOption(argv, 'top', 12);
  const connections = positiveIntegerOption(argv, 'connections', 50);
  const asked = argv.includes('--contestant') ? argv[argv.indexOf('--contestant') + 1] : 'product';
  const contestant = asked === 'bare' || asked === 'bare-born' || asked === 'fastify' ? asked : 'product';
  const asking = argv.includes('--scenario') ? argv[argv.indexOf('--scenario') + 1] : undefined;
  const mcp = asking === 'mcp' && contestant === 'product';
  const only = asking === undefined || mcp ? undefined : Number(asking);
  const threadsOnly = argv.includes('--threads');
  const keep = argv.includes('--keep') ? argv[argv.indexOf('--keep') + 1] : undefined;
  if (keep && threadsOnly) {
    process.stderr.write('bench:profile: --keep keeps CPU profiles, which --threads does not take\n');
    return 2;
  }
  await runToEnd(['npm', 'run', '-s', 'build']);
  await runToEnd([process.execPath, require.resolve('typescript/bin/tsc'), '-p', 'scripts/bench/tsconfig.build.json']);
  const { db, key, env: bench } = await seededBenchDatabase(adminUrl, 'animal_store_profile', pets);
  try {
    const env = { ...bench, MCP_ENABLED: String(mcp), ...settingsOf(argv) };
    const start =
      contestant === 'product' ? [process.execPath, 'dist/src/main.js'] : [process.execPath, 'dist/scripts/bench/serve.js', contestant];
    process.stdout.write(
      `# CPU profile of the ${{ product: 'product', bare: 'bare express floor', 'bare-born': "bare express floor on the product's server", fastify: 'fastify 5 with route schemas' }[contestant]}, ${duration} s per scenario at ${connections} connections\n`,
    );
    if (keep) mkdirSync(keep, { recursive: true });
    for (const [i, scenario] of (mcp ? [MCP_TOOL_CALL] : SCENARIOS).entries()) {
      if (only !== undefined && only !== i) continue;
      const { profile, threads, requests, statuses } = await loadedWindow(start, env, scenario, key, {
        duration,
        pets,
        connections,
        profiled: !threadsOnly,
        keepAs: keep && path.join(keep, `${contestant}-${mcp ? 'mcp' : i}.cpuprofile`),
      });
      const us = (t: number) => (t / Math.max(1, requests)).toFixed(1);
      if (!profile) {
        const total = [...threads.values()].reduce((a, b) => a + b, 0);
        process.stdout.write(`\n## ${scenario.name}: ${requests} requests (${statuses}), ${us(total)} µs of process CPU per request\n\n`);
        process.stdout.write('| thread | µs/request | share |\n|---|---|---|\n');
        for (const [name, t] of [...threads].sort((a, b) => b[1] - a[1]))
          if (t > 0) process.stdout.write(`| ${name} | ${us(t)} | ${((100 * t) / total).toFixed(1)}% |\n`);
        continue;
      }
      const { busy, parts, functions, owners } = attribute(profile, duration);
      process.stdout.write(`\n## ${scenario.name}: ${requests} requests (${statuses}), ${us(busy)} µs of sampled CPU per request\n\n`);
      process.stdout.write('| part | µs/request | share |\n|---|---|---|\n');
      for (const [part, t] of [...parts].sort((a, b) => b[1] - a[1]).slice(0, top))
        process.stdout.write(`| ${part} | ${us(t)} | ${((100 * t) / busy).toFixed(1)}% |\n`);
      process.stdout.write('\n| owner (with what it calls in node and V8) | µs/request | share |\n|---|---|---|\n');
      for (const [o, t] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, top))
        process.stdout.write(`| ${o} | ${us(t)} | ${((100 * t) / busy).toFixed(1)}% |\n`);
      process.stdout.write('\n| function (self time) | µs/request |\n|---|---|\n');
      for (const [fn, t] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`| ${fn} | ${us(t)} |\n`);
    }
  } finally {
    await db.drop();
  }
  return 0;
}

runTool('bench:profile failed', () => main(process.argv.slice(2)), { stack: true });
