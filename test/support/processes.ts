import { type ChildProcess, spawn } from 'node:child_process';
import { waitUntilListening } from '../../scripts/lib/processes';
import { projectRoot } from '../../src/paths';

// The real process entry (src/main.ts) as `npm start` runs it, compiled on the fly,
// in its own process group so that cleanup reaches anything it started.
export const FROM_SOURCE = [process.execPath, '-r', 'ts-node/register', 'src/main.ts'];

export interface Spawned {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

export interface Running extends Spawned {
  baseUrl: string;
  /** The origin without the API root, for the probes. */
  origin: string;
}

const spawned: ChildProcess[] = [];
/** Kills whatever is left of every process a test file spawned; call from afterAll. */
export const reapAll = () => spawned.forEach(reap);

export function spawnServer(env: Record<string, string | undefined>, command = FROM_SOURCE, cwd = projectRoot): Spawned {
  const child = spawn(command[0] as string, command.slice(1), {
    cwd,
    env: {
      ...process.env,
      DATABASE_URL: undefined,
      API_KEYS: undefined,
      PORT: '0',
      TS_NODE_TRANSPILE_ONLY: '1',
      VALIDATE_RESPONSES: 'enforce',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  spawned.push(child);
  let text = '';
  child.stdout?.on('data', (c) => (text += c));
  child.stderr?.on('data', (c) => (text += c));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => text, exit };
}

/** Spawns the server and waits for its "listening on" line. */
export async function startServer(env: Record<string, string | undefined>, command = FROM_SOURCE, cwd = projectRoot): Promise<Running> {
  const s = spawnServer(env, command, cwd);
  const baseUrl = await waitUntilListening(s.child, s.output).catch((err: Error) => {
    throw new Error(`server ${err.message}`);
  });
  return { ...s, baseUrl, origin: new URL(baseUrl).origin };
}

/**
 * Waits until the server's /readyz answers 200, as a load balancer waits before it sends traffic:
 * the banner comes at most 2 s after "listening", ready or not, and a slow machine takes longer.
 */
export async function untilReady(server: Running, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    (await fetch(`${server.origin}/readyz`).then(
      (r) => r.status,
      () => 0,
    )) !== 200
  ) {
    if (server.child.exitCode !== null || Date.now() > deadline) throw new Error(`not ready:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** SIGTERM to the process we spawned, as a process manager sends it; resolves with its exit code. */
export async function stop(server: Spawned): Promise<number | null> {
  server.child.kill('SIGTERM');
  return server.exit;
}

/** Kills whatever is left of a spawned process group (for example a server orphaned by npm). */
export function reap(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // ESRCH: nothing left.
  }
}

/** `npm run -s <script> -- <args>` in the project, as an operator runs it; resolves with its exit status and output. */
export function npmRun(script: string, args: string[], env: Record<string, string | undefined>) {
  const child = spawn('npm', ['run', '-s', script, '--', ...args], { cwd: projectRoot, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c) => (stdout += c));
  child.stderr?.on('data', (c) => (stderr += c));
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (status) => resolve({ status, stdout, stderr })),
  );
}
