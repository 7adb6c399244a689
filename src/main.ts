import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { createApp, createMetricsApp } from './app';
import { type Config, ConfigError, loadConfig } from './config';
import { type Spec, loadSpec } from './contract/spec';
import { stubOperations, withStores } from './handlers';
import { handlerFile } from './handlers/stub';
import { createHttpServer } from './http/server';
import { type Logger, type Logging, createLogging } from './ops/logger';
import { createMetrics } from './ops/metrics';
import { createStores, sweepExpired } from './store';
import { type Sql, connect, queriesInFlight } from './store/db';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './store/embedded';
import { prepareDatabase } from './store/prepare';
import { createReadRouter } from './store/replica';
import { createRateLimiter } from './store/rateLimits';

/** Exit status when the process refuses to serve (EX_CONFIG): an unsafe database or a migration conflict. */
const EXIT_REFUSED = 78;

/** `applied` undefined: the database has not answered yet. */
function describeDatabase(config: Config, url: string, applied: number[] | undefined): string {
  const u = new URL(url);
  const where =
    config.databaseUrl === undefined
      ? `embedded PostgreSQL (PGlite), data in ${config.pgliteDataDir}`
      : `PostgreSQL at ${u.hostname}:${u.port || 5432}${u.pathname}`;
  const pool =
    config.databaseUrl === undefined
      ? ''
      : ` (pool of ${config.databasePoolSize} per process${config.databasePoolMode === 'transaction' ? ', for a transaction-mode pooler' : ''}${config.databaseReplicaUrl ? `; reads from the replica at ${new URL(config.databaseReplicaUrl).host} while it is within ${config.databaseReplicaMaxLagMs} ms` : ''})`;
  if (applied === undefined) return `Database: ${where}${pool}, not reachable yet; answering 503 until it is`;
  return `Database: ${where}${pool}${applied.length ? `; applied migrations ${applied.join(', ')}` : ''}`;
}

/** The short banner: database, key hint, docs, and last the URL (tools wait for "listening on"). */
function banner(
  logger: Logger,
  spec: Spec,
  config: Config,
  { origin, metrics }: { origin: string; metrics: string | undefined },
  database: string,
  processes: number,
): void {
  const log = (msg: string) => logger.info(msg);
  log(database);
  if (config.apiKeyGenerated) {
    log('API_KEYS is not set; this run accepts one generated key:');
    log(`  Authorization: Bearer ${config.apiKeys[0]}`);
    log(`Try: curl -H 'Authorization: Bearer ${config.apiKeys[0]}' ${origin}${spec.apiRoot}/pets`);
  } else {
    log(`Accepting the ${config.apiKeys.length} key(s) in API_KEYS`);
  }
  log(`API reference: ${origin}/docs/ (contract: ${origin}/openapi.yaml)`);
  if (metrics !== undefined) log(`Metrics: ${metrics}/metrics (METRICS_PORT; not on ${origin})`);
  log(
    `Animal Store API ${spec.document.info.version} listening on ${origin}${spec.apiRoot}${processes > 1 ? ` (${processes} processes)` : ''}`,
  );
}

const originOf = (config: Config, port: number) => `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
const portOf = (server: Server, fallback: number) => {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : fallback;
};

interface Serving {
  server: Server;
  /** METRICS_PORT's server, when it is set. */
  metricsServer: Server | undefined;
  /** Resolves with the migrations applied once the database is ready. */
  ready: Promise<number[]>;
}

/**
 * One serving process: the app on a pool, until SIGTERM. It listens at once, whether or not
 * the database answers; requests get 503 until the database is migrated and checked.
 */
async function serve(config: Config, logging: Logging, spec: Spec, sql: Sql, embedded: EmbeddedPostgres | undefined): Promise<Serving> {
  const { logger } = logging;
  if (embedded)
    logger.warn('The embedded PostgreSQL (PGlite) runs without fsync: for development and tests; set DATABASE_URL in production');
  const preparation = prepareDatabase(sql, { logger, onUnsafe: embedded ? 'skip' : config.onUnsafeDatabase });
  preparation.done.catch((err: unknown) => {
    logger.fatal({ err }, err instanceof Error ? err.message : String(err));
    process.exit(EXIT_REFUSED);
  });
  const rateLimiter = config.rateLimit && createRateLimiter(sql, config.rateLimit, logger);
  // Reads from the replica while it keeps up; writes, idempotency records and rate-limit counts stay on the primary.
  const replicaSql =
    config.databaseReplicaUrl === undefined
      ? undefined
      : connect(config.databaseReplicaUrl, { max: config.databasePoolSize, poolMode: config.databasePoolMode });
  const reads = replicaSql && createReadRouter(sql, replicaSql, { maxLagMs: config.databaseReplicaMaxLagMs, logger });
  const stores = createStores(sql, { idempotencyTtlSeconds: config.idempotencyTtlSeconds, preparation, reads });
  const metrics = createMetrics({ queriesInFlight, replica: reads && (() => reads.status()) });
  const app = await createApp({
    spec,
    handlers: withStores(stores),
    apiKeys: config.apiKeys,
    logging,
    metrics,
    metricsToken: config.metricsToken,
    metricsOnOwnPort: config.metricsPort !== undefined,
    rateLimiter,
    validateResponses: config.validateResponses,
    corsOrigins: config.corsOrigins,
  });
  const server = createHttpServer(app, config);
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  // METRICS_PORT: every metric, on a port of its own (workers share it, as they share PORT).
  const metricsServer =
    config.metricsPort === undefined ? undefined : createHttpServer(createMetricsApp(metrics, config.metricsToken), config);
  if (metricsServer) {
    metricsServer.listen(config.metricsPort, config.host);
    await new Promise<void>((resolve, reject) => metricsServer.once('listening', resolve).once('error', reject));
  }

  // Requests reserved for keys idle here for 250 ms go back, for other instances to spend; expired
  // idempotency keys and old windows are swept.
  const flushing = rateLimiter && setInterval(() => void rateLimiter.flush(250), 200);
  const sweeping = setInterval(() => {
    if (preparation.pendingReason() === undefined)
      sweepExpired(sql).catch((err: unknown) => logger.warn({ err }, 'sweeping expired records failed'));
  }, 60_000);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: stopping`);
    preparation.cancel();
    clearInterval(sweeping);
    // Stop accepting, let requests in flight finish (up to 8 s, so that the whole stop stays within 10 s), then end the pool.
    await Promise.all([server.drain(8_000), metricsServer?.drain(1_000)]);
    clearInterval(flushing);
    // Every reserved request not spent goes back, if the database takes it quickly; then the pool, within 1 s.
    await Promise.race([rateLimiter?.flush(), new Promise((resolve) => setTimeout(resolve, 500).unref())]);
    reads?.stop();
    await Promise.all([sql.end({ timeout: 1 }), replicaSql?.end({ timeout: 1 })]);
    await embedded?.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A worker tells the primary where it listens, and when it can serve, for the banner.
  if (cluster.isWorker) {
    process.send?.({ listening: { port: portOf(server, config.port), metricsPort: metricsServer && portOf(metricsServer, 0) } });
    void preparation.done.then(
      (applied) => process.send?.({ ready: applied }),
      () => {},
    );
  }
  return { server, metricsServer, ready: preparation.done };
}

/**
 * WEB_CONCURRENCY > 1: this process forks the workers that serve (each migrates under the
 * migration lock, so they take turns) and stops them on SIGTERM.
 */
function primary(config: Config, logger: Logger, spec: Spec, databaseUrl: string): void {
  // Every worker accepts the same keys, the generated one included.
  const env = { API_KEYS: config.apiKeys.join(',') };
  const workers = Array.from({ length: config.webConcurrency }, () => cluster.fork(env));
  let listening = 0;
  // The banner, once every worker listens and has its database ready (or 2 s after they all listen, as for one process).
  let ready = 0;
  let applied: number[] = [];
  let ports: { port: number; metricsPort?: number } | undefined;
  let printed = false;
  const printBanner = (applied: number[] | undefined) => {
    if (printed || ports === undefined) return;
    printed = true;
    const where = {
      origin: originOf(config, ports.port),
      metrics: ports.metricsPort === undefined ? undefined : originOf(config, ports.metricsPort),
    };
    banner(logger, spec, config, where, describeDatabase(config, databaseUrl, applied), workers.length);
  };
  // Workers say where they listen (the API's port and METRICS_PORT's, shared by them all) and when their database is ready.
  cluster.on('message', (_worker, message: { ready?: number[]; listening?: { port: number; metricsPort?: number } }) => {
    if (message?.listening) {
      listening += 1;
      if (listening !== workers.length) return;
      ports = message.listening;
      if (ready >= workers.length) printBanner(applied);
      else setTimeout(() => printBanner(undefined), 2_000).unref();
      return;
    }
    if (!Array.isArray(message?.ready)) return;
    ready += 1;
    applied = message.ready;
    if (ready >= workers.length) printBanner(applied);
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

/**
 * Operations whose handler is still the stub `npm run generate` wrote: listed (they answer 501),
 * or with ALLOW_STUBS=false a refusal to start, naming them.
 */
function checkStubs(config: Config, logger: Logger): void {
  const stubs = stubOperations();
  if (stubs.length === 0) return;
  const list = stubs.map((id) => `${id} (${handlerFile(id)})`).join(', ');
  if (!config.allowStubs) {
    logger.fatal(
      `ALLOW_STUBS=false and ${stubs.length} operation(s) are still generated stubs: ${list}; implement them, or set ALLOW_STUBS=true to serve them as 501 not_implemented`,
    );
    process.exit(EXIT_REFUSED);
  }
  logger.warn(`${stubs.length} operation(s) are still generated stubs answering 501 not_implemented: ${list}`);
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logging = createLogging({ level: config.logLevel });
  const { logger } = logging;
  // A fault nothing handled ends the process, as Node would end it, but as one JSON line an operator's
  // log pipeline reads, saying whether it was a thrown error or a rejected promise (and the line is flushed).
  process.on('uncaughtException', (err, origin) => {
    logger.fatal({ err, origin }, `${origin === 'unhandledRejection' ? 'unhandled rejection' : 'uncaught exception'}: exiting`);
    process.exit(1);
  });
  const spec = await loadSpec();
  // The primary (or the single process) says it once; workers were forked after it did.
  if (!cluster.isWorker) checkStubs(config, logger);

  if (cluster.isWorker) {
    // Forked by the primary, which migrated the database and prints the banner.
    await serve(
      config,
      logging,
      spec,
      connect(config.databaseUrl as string, { max: config.databasePoolSize, poolMode: config.databasePoolMode }),
      undefined,
    );
    return;
  }
  if (config.webConcurrency > 1) return primary(config, logger, spec, config.databaseUrl as string);

  let embedded: EmbeddedPostgres | undefined;
  let databaseUrl = config.databaseUrl;
  if (databaseUrl === undefined) {
    embedded = await startEmbeddedPostgres(config.pgliteDataDir);
    databaseUrl = embedded.url;
  }
  // PGlite serves one session at a time; a real server gets a pool.
  const sql = connect(databaseUrl, embedded ? { max: 1 } : { max: config.databasePoolSize, poolMode: config.databasePoolMode });
  const { server, metricsServer, ready } = await serve(config, logging, spec, sql, embedded);
  // The banner waits a moment for the database, to say whether it is there.
  const applied = await Promise.race([ready, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2_000).unref())]);
  const where = {
    origin: originOf(config, portOf(server, config.port)),
    metrics: metricsServer && originOf(config, portOf(metricsServer, 0)),
  };
  banner(logger, spec, config, where, describeDatabase(config, databaseUrl, applied), 1);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
