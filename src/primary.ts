import cluster from 'node:cluster';
import type { Config } from './config';
import type { Logger } from './ops/logger';

/** Exit status when the process refuses to serve (EX_CONFIG): an unsafe database or a migration conflict. */
export const EXIT_REFUSED = 78;

/** Where the workers listen: the API's port and METRICS_PORT's, shared by them all. */
export interface Ports {
  port: number;
  metricsPort?: number;
}

/** What a worker tells the primary: where it listens, then the migrations applied once its database is ready. */
export type WorkerMessage = { listening: Ports } | { ready: number[] };

/** A worker's side of the messages: sent by the serving process when it was forked. */
export function tellPrimary(message: WorkerMessage): void {
  process.send?.(message);
}

/**
 * WEB_CONCURRENCY > 1: this process serves nothing itself. It forks the workers that serve
 * (each migrates under the migration lock, so they take turns), starts another when one exits,
 * stops them all when one refuses the database, and stops them on SIGTERM. `printBanner` is
 * called once: when every worker listens and has its database ready, or 2 s after they all
 * listen (`applied` undefined), as for one process.
 */
export function runPrimary(
  config: Config,
  logger: Logger,
  printBanner: (ports: Ports, applied: number[] | undefined, processes: number) => void,
): void {
  // Every worker accepts the same keys, the generated one included.
  const env = { API_KEYS: config.bootstrapKeys.join(',') };
  const workers = Array.from({ length: config.webConcurrency }, () => cluster.fork(env));
  let listening = 0;
  let ready = 0;
  let applied: number[] = [];
  let ports: Ports | undefined;
  let printed = false;
  const printOnce = (migrations: number[] | undefined) => {
    if (printed || ports === undefined) return;
    printed = true;
    printBanner(ports, migrations, workers.length);
  };
  cluster.on('message', (_worker, message: Partial<{ listening: Ports; ready: number[] }>) => {
    if (message?.listening) {
      listening += 1;
      if (listening !== workers.length) return;
      ports = message.listening;
      if (ready >= workers.length) printOnce(applied);
      else setTimeout(() => printOnce(undefined), 2_000).unref();
      return;
    }
    if (!Array.isArray(message?.ready)) return;
    ready += 1;
    applied = message.ready;
    if (ready >= workers.length) printOnce(applied);
  });
  let stopping = false;
  cluster.on('exit', (worker, code, signal) => {
    workers.splice(workers.indexOf(worker), 1);
    if (code === EXIT_REFUSED && !stopping) {
      // Another worker would refuse the same database: stop them all.
      logger.fatal(`worker ${worker.process.pid} refused to serve; stopping`);
      stopping = true;
      process.exitCode = EXIT_REFUSED;
      for (const w of workers) w.process.kill('SIGTERM');
      if (workers.length === 0) process.exit(EXIT_REFUSED);
    } else if (!stopping) {
      logger.error(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
      workers.push(cluster.fork(env));
    } else if (workers.length === 0) {
      process.exit();
    }
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: stopping ${workers.length} processes`);
    for (const w of workers) w.process.kill('SIGTERM');
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
