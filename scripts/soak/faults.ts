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

export interface Stage {
  cluster: AutoFailoverCluster;
  /** One PgBouncer in front of each node, in the order of `cluster.nodes`. */
  bouncers: PgBouncer[];
  instances: Instance[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Hundreds of connections to `origin` that send nothing, held `ms` (or until the server closes them). */
async function storm(origin: string, connections: number, ms: number): Promise<string> {
  const { hostname, port } = new URL(origin);
  const sockets: Socket[] = [];
  for (let i = 0; i < connections; i++) {
    const socket = createConnection({ host: hostname, port: Number(port) });
    socket.on('error', () => {});
    sockets.push(socket);
  }
  await sleep(ms);
  const open = sockets.filter((s) => !s.destroyed).length;
  for (const s of sockets) s.destroy();
  return `${connections} silent connections to ${origin}, ${connections - open} closed by the server within ${ms / 1000} s`;
}

/**
 * Injects fault `kind`; resolves with what was done, once the fault itself is over (a frozen
 * database thawed, a killed instance started again). The service's recovery is the caller's to wait for.
 */
export async function inject(kind: FaultKind, { cluster, bouncers, instances }: Stage): Promise<string> {
  const primary = await cluster.settled();
  const bouncerOf = (node: typeof primary) => bouncers[cluster.nodes.indexOf(node)] as PgBouncer;
  switch (kind) {
    case 'failover': {
      await cluster.performFailover();
      const promoted = await cluster.promoted(primary);
      return `failover: ${primary.name} demoted, ${promoted.name} promoted (pg_auto_failover perform failover)`;
    }
    case 'crash': {
      // The primary's PostgreSQL lost as in a crash: pg_autoctl starts it again, or the monitor fails over.
      await cluster.stopPostgresImmediately(primary);
      return `crash: ${primary.name}'s PostgreSQL stopped with pg_ctl stop -m immediate`;
    }
    case 'pgbouncer':
      await bouncerOf(primary).restart();
      return `pgbouncer: the PgBouncer in front of ${primary.name} (the primary) killed and started again`;
    case 'freeze':
      await cluster.freeze(primary, 2_000);
      return `freeze: ${primary.name}'s PostgreSQL stopped (SIGSTOP) for 2 s`;
    case 'kill': {
      const instance = instances[TARGET] as Instance;
      await instance.killAndRestart();
      return `kill: ${instance.name}'s primary and workers killed with SIGKILL, started again`;
    }
    case 'storm':
      return `storm: ${await storm((instances[TARGET] as Instance).origin, 400, 12_000)}`;
  }
}
