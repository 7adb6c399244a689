import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childrenOf } from './processes';

const run = promisify(execFile);

/** psql's arguments for a local server as `postgres`: unaligned rows, stopping at the first error. */
const psqlSession = (port: number, database: string): string[] => [
  '-h',
  '127.0.0.1',
  '-p',
  String(port),
  '-U',
  'postgres',
  '-d',
  database,
  '-At',
  '-v',
  'ON_ERROR_STOP=1',
];

/** psql's arguments for one statement on a local server as `postgres` (psqlSession). */
export const psqlArgs = (port: number, database: string, sql: string): string[] => [...psqlSession(port, database), '-c', sql];
/** The newest PostgreSQL server's binaries (Debian's postgresql-N-auto-failover matches it). */
const BIN = (() => {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'pg_ctl'))) : [];
  return path.join(root, versions.sort((a, b) => Number(b) - Number(a))[0] ?? '15', 'bin');
})();
const PG_AUTOCTL = '/usr/bin/pg_autoctl';

/**
 * pg_auto_failover (Debian's postgresql-15-auto-failover) on throwaway clusters of a test's own:
 * a monitor, a primary and a secondary with synchronous replication, each on a port of its own
 * (never the shared server on 5432), the monitor tuned to fail over in seconds. Everything runs as the postgres OS user.
 */
export interface FailoverNode {
  name: string;
  port: number;
}

export interface AutoFailoverCluster {
  /** Both nodes, for the service: `postgres://postgres@127.0.0.1:P1,127.0.0.1:P2/postgres?target_session_attrs=primary`. */
  url: string;
  nodes: FailoverNode[];
  /** A node's own URL (whatever its role). */
  urlOf(node: FailoverNode): string;
  /** The node the monitor names primary now (reported and goal state), or undefined during a failover. */
  primary(): Promise<FailoverNode | undefined>;
  /** Waits until the monitor reports one node `wait_primary` or `primary` other than `not`, and returns it. */
  promoted(not: FailoverNode, timeoutMs?: number): Promise<FailoverNode>;
  /** The node lost whole: SIGKILL to its pg_autoctl and every process under it (its PostgreSQL too). */
  killNode(node: FailoverNode): void;
  /** Its PostgreSQL alone stopped as a crash would (`pg_ctl stop -m immediate`); pg_autoctl stays. */
  stopPostgresImmediately(node: FailoverNode): Promise<void>;
  /** Waits until one node is primary and the other its secondary, both as the monitor wants them; returns the primary. */
  settled(timeoutMs?: number): Promise<FailoverNode>;
  /** A switchover the monitor runs (`perform failover`): the secondary promoted, the primary demoted to follow it. */
  performFailover(): Promise<void>;
  /** The node's PostgreSQL (its postmaster and every backend) stopped with SIGSTOP for `ms`, then continued. */
  freeze(node: FailoverNode, ms: number): Promise<void>;
  /**
   * The node's pg_autoctl stopped (SIGSTOP), its PostgreSQL left running: the node as the monitor sees it when
   * it is cut off from the node (nothing reports, nothing demotes it). Returns what continues it.
   */
  cutOffKeeper(node: FailoverNode): () => void;
  /** Whether the node takes a write now: an INSERT (into a table of the helper's own) commits within 1 s. */
  acceptsWrites(node: FailoverNode): Promise<boolean>;
  /** SQL through psql on a node (or the monitor), so a test needs no pool across the failover. */
  psql(node: FailoverNode | 'monitor', sql: string): Promise<string>;
  destroy(): Promise<void>;
}

const isRoot = () => process.getuid?.() === 0;

/** Why no pg_auto_failover cluster can be made here, or undefined when one can. */
export function autoFailoverUnavailable(): string | undefined {
  if (!existsSync(PG_AUTOCTL)) return 'pg_autoctl is missing: apt-get install -y postgresql-15-auto-failover';
  if (!existsSync(path.join(BIN, 'pg_ctl'))) return `no PostgreSQL server binaries in ${BIN}`;
  if (!isRoot() && userInfo().username !== 'postgres') return 'pg_autoctl must run as root (through su postgres) or as postgres';
  return undefined;
}

/** A port outside the ephemeral range (32768–60999), free now: a connection's own port never takes it meanwhile. */
async function quietPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** What the cluster's controls work with: its folder, ports, nodes, services and helpers. */
interface Setup {
  dir: string;
  ports: { monitor: number; node1: number; node2: number };
  nodes: FailoverNode[];
  services: { name: string; child: ChildProcess }[];
  psqlOn: (port: number, database: string, sql: string) => Promise<string>;
  until: <T>(what: string, ms: number, probe: () => Promise<T | undefined>) => Promise<T>;
  /** Each node's name, reported state and goal state, as the monitor has them. */
  states: () => Promise<[string, string, string][]>;
  runAsPostgres: (command: string) => Promise<string>;
}

const processTree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(processTree)];
/** The process id of a node's running postmaster (the first line of its postmaster.pid). */
const postmasterOf = (dir: string, n: FailoverNode) =>
  Number(readFileSync(path.join(dir, n.name, 'postmaster.pid'), 'utf8').split('\n')[0]);
/** `sig` to each of `pids`; one that ended meanwhile is skipped. */
const signalAll = (pids: number[], sig: NodeJS.Signals) =>
  pids.forEach((pid) => {
    try {
      process.kill(pid, sig);
    } catch {
      // Ended meanwhile.
    }
  });
/** Ended: no such process, or a zombie its parent has not reaped yet. */
const gone = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return true;
  }
};

/** A cluster, ready: the monitor, `node1` primary and `node2` its synchronous secondary. */
export async function createAutoFailover(): Promise<AutoFailoverCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-failover-'));
  if (isRoot())
    chownSync(
      dir,
      Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
      Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
    );
  const env = ['config', 'data', 'run']
    .map((d, i) => `${['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_RUNTIME_DIR'][i]}=${path.join(dir, d)}`)
    .join(' ');
  /** A shell command line as postgres, with this cluster's pg_autoctl environment. */
  const shell = (command: string) =>
    `export ${env}; mkdir -p ${path.join(dir, 'config')} ${path.join(dir, 'data')} ${path.join(dir, 'run')}; ${command}`;
  const asPostgres = (command: string): [string, string[]] =>
    isRoot() ? ['su', ['postgres', '-s', '/bin/sh', '-c', shell(command)]] : ['/bin/sh', ['-c', shell(command)]];
  const runAsPostgres = async (command: string) => (await run(...asPostgres(command), { maxBuffer: 1 << 24 })).stdout;
  const services: { name: string; child: ChildProcess }[] = [];
  const common = `--hostname 127.0.0.1 --auth trust --no-ssl --pgctl ${BIN}/pg_ctl`;
  const serve = (name: string, args: string) => {
    const child = spawn(
      ...asPostgres(`exec ${PG_AUTOCTL} ${args} --pgdata ${path.join(dir, name)} ${common} --run >${path.join(dir, `${name}.log`)} 2>&1`),
      {
        stdio: 'ignore',
      },
    );
    services.push({ name, child });
  };
  const ports = { monitor: await quietPort(), node1: await quietPort(), node2: await quietPort() };
  // The statement goes to psql on its standard input, not as an argument: an argument holds at most 128 KiB (spawn
  // fails with E2BIG), and a check's statement may name every create a run acknowledged.
  const psqlOn = (port: number, database: string, sql: string) => {
    const running = run(`${BIN}/psql`, [...psqlSession(port, database), '-f', '-']);
    // A psql that cannot connect may exit before it reads the statement: the write then fails (EPIPE), and
    // its exit status is what says so (a probe waiting for the server asks again), not an unhandled error.
    running.child.stdin?.on('error', () => {});
    running.child.stdin?.end(sql);
    return running.then((r) => r.stdout.trim());
  };
  const until = async <T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const value = await probe().catch(() => undefined);
      if (value !== undefined) return value;
      if (Date.now() > end) throw new Error(`pg_auto_failover: ${what} did not happen within ${ms} ms (logs in ${dir})`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  const nodes: FailoverNode[] = [
    { name: 'node1', port: ports.node1 },
    { name: 'node2', port: ports.node2 },
  ];
  const states = async () =>
    (await psqlOn(ports.monitor, 'pg_auto_failover', 'SELECT nodename, reportedstate, goalstate FROM pgautofailover.node ORDER BY nodeid'))
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('|') as [string, string, string]);

  serve('monitor', `create monitor --pgport ${ports.monitor}`);
  await until('the monitor starting', 60_000, async () =>
    (await psqlOn(ports.monitor, 'pg_auto_failover', 'SELECT 1')) === '1' ? true : undefined,
  );
  for (const setting of [
    'health_check_period = 1000',
    'health_check_retry_delay = 500',
    'health_check_timeout = 1000',
    // A node whose health checks fail and whose keeper has not reported for 2 s is failed over.
    'node_considered_unhealthy_timeout = 2000',
    // How long a promoted node stays read-only waiting for the lost primary to report itself demoted: a node
    // killed whole never does, and creates wait this out. 1 s is safe with the service: an old primary still
    // running acknowledges no write (its synchronous standby has left) and answers no read (serving_primary()).
    // With 3 s and 2 s a node kill took writes 6.2–7.6 s after it, with these 4.7–5.4 s (docs/operations.md).
    'primary_demote_timeout = 1000',
  ])
    await psqlOn(ports.monitor, 'pg_auto_failover', `ALTER SYSTEM SET pgautofailover.${setting}`);
  await psqlOn(ports.monitor, 'pg_auto_failover', 'SELECT pg_reload_conf()');
  const monitorUri = `postgres://autoctl_node@127.0.0.1:${ports.monitor}/pg_auto_failover?sslmode=disable`;
  const node = (n: FailoverNode) => `create postgres --pgport ${n.port} --name ${n.name} --monitor ${monitorUri}`;
  serve('node1', node(nodes[0]!));
  await until('node1 becoming the single primary', 60_000, async () =>
    (await states()).some(([n, r]) => n === 'node1' && r === 'single') ? true : undefined,
  );
  serve('node2', node(nodes[1]!));
  // The secondary's pg_basebackup waits for a checkpoint: one every half second brings it in seconds.
  await until('node2 joining as the synchronous secondary', 120_000, async () => {
    await psqlOn(ports.node1, 'postgres', 'CHECKPOINT').catch(() => undefined);
    const s = await states();
    return s.length === 2 && s.every(([, r, g]) => r === g && (r === 'primary' || r === 'secondary')) ? true : undefined;
  });

  await psqlOn(ports.node1, 'postgres', 'CREATE TABLE failover_probe (at timestamptz DEFAULT now())');
  const setup: Setup = { dir, ports, nodes, services, psqlOn, until, states, runAsPostgres };
  return { ...controls(setup), ...faults(setup) };
}

/** The cluster's addresses, its state as the monitor reports it, and its end. */
function controls({ dir, ports, nodes, services, psqlOn, until, states }: Setup): Omit<AutoFailoverCluster, FaultNames> {
  return {
    url: `postgres://postgres@${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/postgres?target_session_attrs=primary`,
    nodes,
    urlOf: (n) => `postgres://postgres@127.0.0.1:${n.port}/postgres`,
    async primary() {
      const s = await states();
      const [name] = s.find(([, r, g]) => r === 'primary' && g === 'primary') ?? [];
      return nodes.find((n) => n.name === name);
    },
    promoted: (not, ms = 60_000) =>
      until(`a node other than ${not.name} being promoted`, ms, async () => {
        const [name] = (await states()).find(([n, r]) => n !== not.name && (r === 'wait_primary' || r === 'primary')) ?? [];
        return nodes.find((n) => n.name === name);
      }),
    settled: (ms = 120_000) =>
      until('one primary and one secondary', ms, async () => {
        const s = await states();
        const [name] = s.find(([, r]) => r === 'primary') ?? [];
        const done = s.length === 2 && s.every(([, r, g]) => r === g) && s.some(([, r]) => r === 'secondary');
        return done ? nodes.find((n) => n.name === name) : undefined;
      }),
    acceptsWrites: (n) =>
      run(`${BIN}/psql`, psqlArgs(n.port, 'postgres', 'INSERT INTO failover_probe DEFAULT VALUES'), {
        timeout: 1_000,
        killSignal: 'SIGKILL',
      }).then(
        () => true,
        () => false,
      ),
    psql: (n, sql) => (n === 'monitor' ? psqlOn(ports.monitor, 'pg_auto_failover', sql) : psqlOn(n.port, 'postgres', sql)),
    async destroy() {
      const pids = services.flatMap(({ child }) => (child.pid ? processTree(child.pid) : []));
      signalAll([...pids].reverse(), 'SIGKILL');
      // Their files go once they are gone (a zombie left unreaped here counts as gone).
      await until('every process of the cluster ending', 10_000, () => Promise.resolve(pids.every(gone) ? true : undefined)).catch(
        () => undefined,
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

type FaultNames = 'performFailover' | 'killNode' | 'stopPostgresImmediately' | 'freeze' | 'cutOffKeeper';

/** What the cluster can be made to suffer. */
function faults({ dir, ports, services, psqlOn, until, runAsPostgres }: Setup): Pick<AutoFailoverCluster, FaultNames> {
  return {
    async performFailover() {
      await psqlOn(ports.monitor, 'pg_auto_failover', 'SELECT pgautofailover.perform_failover()');
    },
    killNode(n) {
      const service = services.find((s) => s.name === n.name);
      if (!service?.child.pid) throw new Error(`${n.name} is not running`);
      // Frozen first, parents before children, until the tree stops changing: a supervisor killed
      // after its child could start that child again first (pg_autoctl restarts its PostgreSQL),
      // leaving the old primary serving. A stopped process forks nothing; then all die at once.
      const frozen = new Set<number>();
      for (let tree = processTree(service.child.pid); tree.some((pid) => !frozen.has(pid)); tree = processTree(service.child.pid))
        for (const pid of tree.filter((p) => !frozen.has(p))) {
          signalAll([pid], 'SIGSTOP');
          frozen.add(pid);
        }
      signalAll([...frozen], 'SIGKILL');
    },
    async freeze(n, ms) {
      const tree = processTree(postmasterOf(dir, n));
      signalAll(tree, 'SIGSTOP');
      try {
        await new Promise((resolve) => setTimeout(resolve, ms));
      } finally {
        signalAll(tree, 'SIGCONT');
      }
    },
    cutOffKeeper(n) {
      const service = services.find((s) => s.name === n.name);
      if (!service?.child.pid) throw new Error(`${n.name} is not running`);
      const postgres = new Set(processTree(postmasterOf(dir, n)));
      const keeper = processTree(service.child.pid).filter((pid) => !postgres.has(pid));
      signalAll(keeper, 'SIGSTOP');
      return () => signalAll(keeper, 'SIGCONT');
    },
    async stopPostgresImmediately(n) {
      // pg_ctl's own wait (-w) watches postmaster.pid, which pg_autoctl may write again at once for the
      // server it restarts: it then waits for that one too, and fails after 60 s. The old postmaster's end
      // is what is waited for instead.
      const postmaster = postmasterOf(dir, n);
      await runAsPostgres(`${BIN}/pg_ctl -D ${path.join(dir, n.name)} -m immediate -W stop`);
      await until(`${n.name}'s postmaster ${postmaster} ending`, 30_000, () => Promise.resolve(gone(postmaster) ? true : undefined));
    },
  };
}
