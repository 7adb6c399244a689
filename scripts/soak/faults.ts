import { type Socket, createConnection } from 'node:net';
import type { AutoFailoverCluster } from '../lib/autoFailover';
import type { PgBouncer } from '../lib/pgbouncer';
import type { Instance } from './instances';

export type FaultKind = 'failover' | 'crash' | 'pgbouncer' | 'freeze' | 'kill' | 'storm';
/** The schedule's order: each kind in turn, over and over. */
export const FAULTS: FaultKind[] = ['failover', 'pgbouncer', 'kill', 'freeze', 'storm', 'crash'];
/**
 * The kills and the storms go to the first instance, always: the second one's processes then live through the
 * whole run, and their RSS says whether memory grows (a process killed every few minutes would never be measured).
 */
const TARGET = 0;
/** How long a storm's connections are held at most: HEADERS_TIMEOUT_MS (10 s), Node's check every second, and a margin. */
export const STORM_MS = 15_000;

export interface Stage {
  cluster: AutoFailoverCluster;
  /** One PgBouncer in front of each node, in the order of `cluster.nodes`. */
  bouncers: PgBouncer[];
  instances: Instance[];
}

/** What a fault did, and for a storm, how many of its connections the server still held at its end. */
export interface Injected {
  what: string;
  silentHeld?: number;
}

/**
 * Hundreds of connections to `origin` that send nothing, held until the server has closed them all or `ms` passed.
 * The server owes each a 408 and a close after HEADERS_TIMEOUT_MS (10 s): each socket is read (resumed), so that
 * its close is seen when it comes.
 */
async function storm(origin: string, connections: number, ms: number): Promise<Injected> {
  const { hostname, port } = new URL(origin);
  const started = Date.now();
  const closedAfter: number[] = [];
  const sockets: Socket[] = [];
  let allClosed: () => void = () => {};
  const done = new Promise<void>((resolve) => (allClosed = resolve));
  for (let i = 0; i < connections; i++) {
    const socket = createConnection({ host: hostname, port: Number(port) });
    socket.on('error', () => {});
    socket.resume();
    socket.once('close', () => {
      closedAfter.push(Date.now() - started);
      if (closedAfter.length === connections) allClosed();
    });
    sockets.push(socket);
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
  const held = connections - closedAfter.length;
  for (const s of sockets) s.destroy();
  const last = closedAfter.length ? `, the last after ${Math.max(...closedAfter)} ms` : '';
  return {
    what: `storm: ${connections} silent connections to ${origin}, ${connections - held} closed by the server within ${ms / 1000} s${last}`,
    silentHeld: held,
  };
}

/**
 * Injects fault `kind`; resolves with what was done, once the fault itself is over (a frozen
 * database thawed, a killed instance started again). The service's recovery is the caller's to wait for.
 */
export async function inject(kind: FaultKind, { cluster, bouncers, instances }: Stage): Promise<Injected> {
  const primary = await cluster.settled();
  const bouncerOf = (node: typeof primary) => bouncers[cluster.nodes.indexOf(node)] as PgBouncer;
  switch (kind) {
    case 'failover': {
      await cluster.performFailover();
      const promoted = await cluster.promoted(primary);
      return { what: `failover: ${primary.name} demoted, ${promoted.name} promoted (pg_auto_failover perform failover)` };
    }
    case 'crash': {
      // The primary's PostgreSQL lost as in a crash: pg_autoctl starts it again, or the monitor fails over.
      await cluster.stopPostgresImmediately(primary);
      return { what: `crash: ${primary.name}'s PostgreSQL stopped with pg_ctl stop -m immediate` };
    }
    case 'pgbouncer':
      await bouncerOf(primary).restart();
      return { what: `pgbouncer: the PgBouncer in front of ${primary.name} (the primary) killed and started again` };
    case 'freeze':
      await cluster.freeze(primary, 2_000);
      return { what: `freeze: ${primary.name}'s PostgreSQL stopped (SIGSTOP) for 2 s` };
    case 'kill': {
      const instance = instances[TARGET] as Instance;
      await instance.killAndRestart();
      return { what: `kill: ${instance.name}'s primary and workers killed with SIGKILL, started again` };
    }
    case 'storm':
      return storm((instances[TARGET] as Instance).origin, 400, STORM_MS);
  }
}
