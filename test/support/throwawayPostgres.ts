import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { psqlArgs } from '../../scripts/lib/autoFailover';
import { childrenOf, freePort } from '../../scripts/lib/processes';

export { psqlArgs };

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of a test's own, on its own port, for fault and crash tests: the
 * shared server is never stopped or signalled. Everything here acts on this cluster's
 * postmaster and its children, found by process id.
 */
export interface ThrowawayPostgres {
  url: string;
  port: number;
  start(): Promise<void>;
  /** pg_ctl stop: `fast` (the default) disconnects clients and shuts down cleanly; `immediate` quits at once, recovered from the WAL at the next start. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** SIGKILL to the postmaster and every backend: a crash, recovered from the WAL at the next start. Returns once they are dead. */
  kill(): void;
  /** SIGSTOP / SIGCONT to the postmaster and every backend: a server that stops answering. */
  freeze(): void;
  thaw(): void;
  /** Runs SQL through psql (so the test needs no pool of its own across crashes), in `database` (postgres). */
  psql(sql: string, database?: string): Promise<string>;
  destroy(): Promise<void>;
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  const [newest] = versions;
  return newest === undefined ? undefined : path.join(root, newest, 'bin');
}

const isRoot = () => process.getuid?.() === 0;

/** Why no throwaway cluster can be made here, or undefined when one can. */
export function throwawayUnavailable(): string | undefined {
  if (!binDir()) return 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin';
  if (!isRoot() && userInfo().username !== 'postgres') return 'initdb must run as root (through su postgres) or as postgres';
  return undefined;
}

/**
 * `describe`, or `describe.skip` with the reason when no cluster can be made here.
 * REQUIRE_THROWAWAY_POSTGRES=1 (set by .ci/run) turns the skip into a failure.
 */
export function describeWithThrowawayPostgres(name: string, fn: () => void): void {
  const why = throwawayUnavailable();
  if (why && process.env.REQUIRE_THROWAWAY_POSTGRES === '1') throw new Error(`${name}: ${why}, and REQUIRE_THROWAWAY_POSTGRES=1`);
  if (why) {
    describe.skip(`${name} (skipped: ${why})`, fn);
    return;
  }
  describe(name, fn);
}

/** As the postgres OS user: through su when we are root. */
async function asPostgres(command: string[]): Promise<string> {
  const quoted = command.map((c) => `'${c.replace(/'/g, `'\\''`)}'`).join(' ');
  const [file = '', ...args] = command;
  const { stdout } = isRoot() ? await run('su', ['postgres', '-s', '/bin/sh', '-c', quoted]) : await run(file, args);
  return stdout;
}

/**
 * A cluster of its own: a new one (initdb), or with `replicaOf` a streaming replica of another
 * throwaway cluster, copied from it with `pg_basebackup -R` (it starts in recovery, following it).
 */
export async function createThrowawayPostgres(options: { replicaOf?: ThrowawayPostgres } = {}): Promise<ThrowawayPostgres> {
  const bin = binDir() as string;
  const scratch = mkdtempSync(path.join(tmpdir(), 'animal-store-pg-'));
  const dataDir = path.join(scratch, 'data');
  if (isRoot())
    chownSync(
      scratch,
      Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
      Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
    );
  if (options.replicaOf)
    await asPostgres([
      path.join(bin, 'pg_basebackup'),
      '-h',
      '127.0.0.1',
      '-p',
      String(options.replicaOf.port),
      '-U',
      'postgres',
      '-D',
      dataDir,
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ]);
  else await asPostgres([path.join(bin, 'initdb'), '-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync']);
  const port = await freePort();
  const pgctl = (...args: string[]) => asPostgres([path.join(bin, 'pg_ctl'), '-D', dataDir, ...args]);

  // The postmaster and its children (backends, background workers), by /proc.
  const processes = (): number[] => {
    const file = path.join(dataDir, 'postmaster.pid');
    if (!existsSync(file)) return [];
    const postmaster = Number(readFileSync(file, 'utf8').split('\n')[0]);
    // A stale pid file (after a kill) may name a process that is no longer ours.
    try {
      if (!readFileSync(`/proc/${postmaster}/cmdline`, 'utf8').includes(dataDir)) return [];
    } catch {
      return [];
    }
    return [postmaster, ...childrenOf(postmaster)];
  };
  // Listed again until no process is new: a backend the postmaster forked while the list was read would otherwise
  // miss the signal (a freeze that left one backend serving: a create answered 201 while "frozen").
  const signal = (sig: NodeJS.Signals) => {
    const sent = new Set<number>();
    // At most 10 rounds: a running postmaster (SIGCONT) may keep forking under load.
    for (let fresh = processes(), round = 0; fresh.length > 0 && round < 10; fresh = processes().filter((pid) => !sent.has(pid)), round++) {
      for (const pid of fresh) {
        sent.add(pid);
        try {
          process.kill(pid, sig);
        } catch {
          // Gone already.
        }
      }
    }
  };

  const cluster: ThrowawayPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await pgctl(
        '-o',
        `-p ${port} -k ${scratch} -c listen_addresses=127.0.0.1`,
        '-l',
        path.join(scratch, 'log'),
        '-w',
        '-t',
        '60',
        'start',
      );
    },
    async stop(mode = 'fast') {
      await pgctl('-m', mode, '-w', 'stop');
    },
    kill() {
      const pids = processes();
      signal('SIGKILL');
      // Dead processes here can linger as zombies (this machine's init does not reap them),
      // and PostgreSQL takes a zombie postmaster named in its lock file for a live one. After
      // a real crash no process is left: remove the stale lock files once all are gone.
      const gone = (pid: number) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
        } catch {
          return true;
        }
      };
      const until = Date.now() + 5_000;
      while (!pids.every(gone) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      for (const file of [
        path.join(dataDir, 'postmaster.pid'),
        path.join(scratch, `.s.PGSQL.${port}.lock`),
        path.join(scratch, `.s.PGSQL.${port}`),
      ])
        rmSync(file, { force: true });
    },
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
    psql: (sql, database = 'postgres') => asPostgres([path.join(bin, 'psql'), ...psqlArgs(port, database, sql)]),
    async destroy() {
      signal('SIGCONT');
      if (processes().length) await pgctl('-m', 'immediate', '-w', 'stop').catch(() => signal('SIGKILL'));
      rmSync(scratch, { recursive: true, force: true });
    },
  };
  return cluster;
}
