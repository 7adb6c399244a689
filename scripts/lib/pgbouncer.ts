import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitFor } from './processes';

/** A PgBouncer of a test's own, in front of a throwaway cluster: Debian's `pgbouncer` (.ci/run installs it). */
export interface PgBouncer {
  /** The URL of database `postgres` through the pooler. */
  url: string;
  port: number;
  /** Killed (SIGKILL: every client and server connection drops at once) and started again on its port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const BINARY = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((f) => existsSync(f));

/** Why no PgBouncer can be started here, or undefined when one can. */
export const pgbouncerUnavailable = (): string | undefined => (BINARY ? undefined : 'no pgbouncer binary (apt-get install pgbouncer)');

/**
 * Starts PgBouncer in `poolMode` in front of the PostgreSQL on 127.0.0.1:`backendPort`, with
 * its settings as shipped (no ignore_startup_parameters): what a new user would run; `settings`
 * adds lines to its [pgbouncer] section (the soak's `server_login_retry`, docs/operations.md).
 */
export async function startPgBouncer(
  backendPort: number,
  poolMode: 'session' | 'transaction',
  poolSize = 20,
  settings: Record<string, string | number> = {},
): Promise<PgBouncer> {
  if (!BINARY) throw new Error(pgbouncerUnavailable());
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-pgbouncer-'));
  const port = await freePort();
  const ini = path.join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `postgres = host=127.0.0.1 port=${backendPort} dbname=postgres user=postgres`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      `pool_mode = ${poolMode}`,
      'max_client_conn = 1000',
      `default_pool_size = ${poolSize}`,
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      ...Object.entries(settings).map(([name, value]) => `${name} = ${value}`),
      '',
    ].join('\n'),
  );
  // PgBouncer will not run as root: it switches to the postgres user (-u), which must read its files.
  const root = process.getuid?.() === 0;
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    chownSync(ini, uid, gid);
  }
  /** PgBouncer on `port`, listening; fails if it exits at start. */
  const launch = async () => {
    const child: ChildProcess = spawn(BINARY, [...(root ? ['-u', 'postgres'] : []), ini], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let gone = false;
    void exited.then(() => (gone = true));
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          if (gone) return resolve(true);
          const socket = createConnection({ host: '127.0.0.1', port }, () => {
            socket.end();
            resolve(true);
          });
          socket.once('error', () => resolve(false));
        }),
      { timeoutMs: 10_000 },
    );
    if (gone) throw new Error(`pgbouncer exited at start (see ${path.join(dir, 'pgbouncer.log')})`);
    return { child, exited };
  };
  let running: { child: ChildProcess; exited: Promise<void> } | undefined = await launch();
  const kill = async (signal: NodeJS.Signals) => {
    if (!running) return;
    const { child, exited } = running;
    running = undefined;
    child.kill(signal);
    await exited;
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart() {
      await kill('SIGKILL');
      running = await launch();
    },
    async stop() {
      await kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
