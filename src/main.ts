import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { createApp, createMetricsApp } from './app';
import { type Config, ConfigError, loadConfig } from './config';
import { handlerFile } from './contract/handlers';
import { type Spec, loadSpec } from './contract/spec';
import { stubOperations, withStores } from './handlers';
import { createHttpServer } from './http/server';
import { LOG_BASE, type Logger, type Logging, createLogging } from './ops/logger';
import { type DatabaseFacts, banner, describeDatabase } from './ops/banner';
import { createMetrics } from './ops/metrics';
import { type Tracing, startTracing } from './ops/tracing';
import { EXIT_REFUSED, type Ports, runPrimary, tellPrimary } from './primary';
import { createStores, sweepExpired } from './store';
import { createKeyRegistry } from './store/apiKeys';
import { type Sql, connect, queriesInFlight } from './store/db';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './store/embedded';
import { prepareDatabase } from './store/prepare';
import { createReadRouter } from './store/replica';
import { createRateLimiter } from './store/rateLimits';

const originOf = (config: Config, port: number) => `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
const portOf = (server: Server, fallback: number) => {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : fallback;
};

/** The banner (src/ops/banner.ts) of this process, or of the primary for its workers. */
function printBanner(
  logger: Logger,
  spec: Spec,
  config: Config,
  databaseUrl: string,
  ports: Ports,
  applied: number[] | undefined,
  processes: number,
) {
  const database: DatabaseFacts = {
    url: databaseUrl,
    embeddedDataDir: config.databaseUrl === undefined ? config.pgliteDataDir : undefined,
    poolSize: config.databasePoolSize,
    poolMode: config.databasePoolMode,
    replicaUrl: config.databaseReplicaUrl,
    replicaMaxLagMs: config.databaseReplicaMaxLagMs,
  };
  banner(logger, {
    title: spec.document.info.title,
    version: spec.document.info.version,
    apiRoot: spec.apiRoot,
    keys: { count: config.apiKeys.length, generated: config.apiKeyGenerated ? config.apiKeys[0] : undefined },
    origin: originOf(config, ports.port),
    metricsOrigin: ports.metricsPort === undefined ? undefined : originOf(config, ports.metricsPort),
    database: describeDatabase(database, applied),
    processes,
  });
}

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
async function serve(
  config: Config,
  logging: Logging,
  spec: Spec,
  sql: Sql,
  embedded: EmbeddedPostgres | undefined,
  tracing: Tracing | undefined,
): Promise<Serving> {
  const { logger } = logging;
  if (embedded)
    logger.warn('The embedded PostgreSQL (PGlite) runs without fsync: for development and tests; set DATABASE_URL in production');
  const preparation = prepareDatabase(sql, { logger, onUnsafe: embedded ? 'skip' : config.onUnsafeDatabase });
  preparation.done.catch((err: unknown) => {
    logger.fatal({ err }, err instanceof Error ? err.message : String(err));
    process.exit(EXIT_REFUSED);
  });
  const rateLimiter = config.rateLimit && createRateLimiter(sql, config.rateLimit, logger);
  // The managed keys, in memory, refreshed from the primary every 250 ms (never from the replica), on a
  // connection of their own: sharing the request pool behind PgBouncer, a request occasionally waited out
  // its deadline on the connection of a statement cancelled through the pooler (docs/operations.md, Keys).
  const keysSql = connect(embedded?.url ?? (config.databaseUrl as string), {
    max: 1,
    poolMode: embedded ? 'session' : config.databasePoolMode,
  });
  const keyRegistry = createKeyRegistry(keysSql, { logger, after: preparation.done });
  // Reads from the replica while it keeps up; writes, idempotency records and rate-limit counts stay on the primary.
  const replicaSql =
    config.databaseReplicaUrl === undefined
      ? undefined
      : connect(config.databaseReplicaUrl, {
          max: config.databasePoolSize,
          poolMode: config.databasePoolMode,
          statements: tracing?.statements(config.databaseReplicaUrl),
        });
  const reads = replicaSql && createReadRouter(sql, replicaSql, { maxLagMs: config.databaseReplicaMaxLagMs, logger });
  const stores = createStores(sql, { idempotencyTtlSeconds: config.idempotencyTtlSeconds, preparation, reads, keys: keyRegistry });
  const metrics = createMetrics({ queriesInFlight, replica: reads && (() => reads.status()), exemplars: tracing !== undefined });
  const app = await createApp({
    spec,
    handlers: withStores(stores),
    apiKeys: config.apiKeys,
    keyRegistry,
    logging,
    metrics,
    metricsToken: config.metricsToken,
    metricsOnOwnPort: config.metricsPort !== undefined,
    rateLimiter,
    validateResponses: config.validateResponses,
    corsOrigins: config.corsOrigins,
    tracing,
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
    await Promise.race([keyRegistry.stop(), new Promise((resolve) => setTimeout(resolve, 500).unref())]);
    await Promise.all([sql.end({ timeout: 1 }), replicaSql?.end({ timeout: 1 }), keysSql.end({ timeout: 1 })]);
    await embedded?.stop();
    // The spans of the last requests, exported (within the exporter's timeout) before the process ends.
    await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, 'exporting the last spans failed'));
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return { server, metricsServer, ready: preparation.done };
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
  // A worker's lines say which worker it is (WEB_CONCURRENCY > 1): what it answered can be told apart.
  const logging = createLogging({
    level: config.logLevel,
    ...(cluster.worker ? { base: { ...LOG_BASE, worker: cluster.worker.id } } : {}),
  });
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

  if (cluster.isPrimary && config.webConcurrency > 1) {
    // The primary forks the workers that serve, and prints the banner for them (src/primary.ts).
    runPrimary(config, logger, (ports, applied, processes) =>
      printBanner(logger, spec, config, config.databaseUrl as string, ports, applied, processes),
    );
    return;
  }

  // A serving process: the only one, or a worker the primary forked (with DATABASE_URL: the config requires it).
  let embedded: EmbeddedPostgres | undefined;
  let databaseUrl = config.databaseUrl;
  if (databaseUrl === undefined) {
    embedded = await startEmbeddedPostgres(config.pgliteDataDir);
    databaseUrl = embedded.url;
  }
  // Off unless OTEL_TRACES_EXPORTER names an exporter (docs/operations.md, Observability).
  const tracing = startTracing(config.tracing, { serviceVersion: spec.document.info.version });
  // PGlite serves one session at a time; a real server gets a pool.
  const statements = tracing?.statements(databaseUrl);
  const sql = connect(
    databaseUrl,
    embedded ? { max: 1, statements } : { max: config.databasePoolSize, poolMode: config.databasePoolMode, statements },
  );
  const { server, metricsServer, ready } = await serve(config, logging, spec, sql, embedded, tracing);
  const ports = { port: portOf(server, config.port), metricsPort: metricsServer && portOf(metricsServer, 0) };
  if (cluster.isWorker) {
    // The primary prints the banner once every worker listens and has its database ready.
    tellPrimary({ listening: ports });
    ready.then(
      (applied) => tellPrimary({ ready: applied }),
      () => {},
    );
    return;
  }
  // The banner waits a moment for the database, to say whether it is there.
  const applied = await Promise.race([ready, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2_000).unref())]);
  printBanner(logger, spec, config, databaseUrl, ports, applied, 1);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
