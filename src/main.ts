/**
 * A serving process, read as build, listen, stop: the configuration read once, the database
 * opened in one place, the app built on it, listening, and on SIGTERM the stop as a list of steps.
 * WEB_CONCURRENCY > 1: this process is the cluster primary instead, which forks the serving ones.
 */
import cluster from 'node:cluster';
import { type App, createApp, createMetricsApp } from './app';
import { type Config, ConfigError, isLoopbackHost, loadConfig } from './config';
import { compileEventSerialiser } from './contract/serialisers';
import { type Spec, loadSpec } from './contract/spec';
import { stubsAtStartUp, withStores } from './handlers';
import { type HttpServer, createHttpServer, listen } from './http/server';
import { EMBEDDED_WARNING, printBanner } from './ops/banner';
import { LOG_BASE, type Logger, type Logging, createLogging } from './ops/logger';
import { type Metrics, createMetrics } from './ops/metrics';
import { type ShutdownStep, shutDown } from './ops/shutdown';
import { type Tracing, startTracing } from './ops/tracing';
import { EXIT_REFUSED, type Ports, runPrimary, tellPrimary } from './primary';
import { createStores, sweepExpired } from './store';
import { type KeyRegistry, createKeyRegistry } from './store/keys/registry';
import { queriesInFlight } from './store/database/db';
import { type Database, openDatabase } from './store/database/open';
import { type DatabasePreparation, prepareDatabase } from './store/database/prepare';
import { type RateLimiter, createRateLimiter } from './store/rateLimits';
import { type ReadRouter, createReadRouter } from './store/database/replica';
import type { GroupCommitOptions } from './store/write/groupCommit';
import { type Webhooks, createWebhooks } from './webhooks';

/** A serving process's parts, built before it listens. */
interface Service {
  database: Database;
  preparation: DatabasePreparation;
  keyRegistry: KeyRegistry;
  rateLimiter: RateLimiter | undefined;
  reads: ReadRouter | undefined;
  tracing: Tracing | undefined;
  app: App;
  /** METRICS_PORT's app, when it is set. */
  metricsApp: App | undefined;
  /** The service's metrics, which both apps serve. */
  metrics: Metrics;
  /** The delivery of events to webhook endpoints: started once the database is ready. */
  webhooks: Webhooks;
}

interface Listening {
  server: HttpServer;
  metricsServer: HttpServer | undefined;
  ports: Ports;
}

/**
 * The database and what runs on it. The process does not wait for the database: it listens at
 * once, and requests get 503 until the database is migrated and checked and the keys are read.
 */
async function build(config: Config, logging: Logging, spec: Spec): Promise<Service> {
  const { logger } = logging;
  // Off unless OTEL_TRACES_EXPORTER names an exporter (docs/operations.md, Observability).
  const tracing = startTracing(config.tracing, { serviceVersion: spec.document.info.version });
  const database = await openDatabase({
    url: config.databaseUrl,
    embeddedDataDir: config.pgliteDataDir,
    poolSize: config.databasePoolSize,
    poolMode: config.databasePoolMode,
    replicaUrl: config.databaseReplicaUrl,
    statements: tracing && ((url) => tracing.statements(url)),
  });
  const { sql, embedded, replicaSql } = database;
  if (embedded) logger.warn(EMBEDDED_WARNING);
  const preparation = prepareDatabase(sql, { logger, onUnsafe: embedded ? 'skip' : config.onUnsafeDatabase });
  preparation.done.catch((err: unknown) => {
    logger.fatal({ err }, err instanceof Error ? err.message : String(err));
    process.exit(EXIT_REFUSED);
  });
  const parts = {
    database,
    preparation,
    tracing,
    webhooks: createWebhooks(sql, logger, {
      allowPrivateTargets: config.webhookAllowPrivateTargets,
      writeEvent: compileEventSerialiser(spec),
      tracing,
    }),
    rateLimiter: config.rateLimit && createRateLimiter(sql, config.rateLimit, logger),
    // The managed keys, in memory, refreshed from the primary (never the replica: its lag would stretch a revocation).
    keyRegistry: createKeyRegistry(database.keysSql, { logger, after: preparation.done, lastUseSql: sql }),
    // Reads from the replica while it keeps up; writes, idempotency records and rate-limit counts stay on the primary.
    reads: replicaSql && createReadRouter(sql, replicaSql, { maxLagMs: config.databaseReplicaMaxLagMs, logger }),
  };
  return { ...parts, ...(await buildApps(config, logging, spec, parts)) };
}

/** The service's metrics: the request metrics, and what the pool, the replica, the webhooks and the log destination report. */
function serviceMetrics({ reads, tracing, webhooks }: Omit<Service, 'app' | 'metricsApp' | 'metrics'>, logging: Logging) {
  return createMetrics({
    queriesInFlight,
    replica: reads && (() => reads.status()),
    exemplars: tracing !== undefined,
    webhookBacklog: () => webhooks.backlog(),
    logLinesDropped: () => logging.droppedLines(),
  });
}

/** The group commit's spans when traced, and the warning of a group (or its connection's reserve) that held its slot past its bound. */
const groupCommitOptions = (tracing: Tracing | undefined, logging: Logging): GroupCommitOptions => ({
  tracing,
  stalled: (what) =>
    logging.logger.warn(
      { what },
      `A group commit's ${what === 'group' ? 'transaction' : 'connection reserve'} held its slot past its bound without settling; the slot went to the next group`,
    ),
});

/** The app on the stores, and METRICS_PORT's app sharing its metrics. */
async function buildApps(config: Config, logging: Logging, spec: Spec, parts: Omit<Service, 'app' | 'metricsApp' | 'metrics'>) {
  const { database, preparation, keyRegistry, rateLimiter, reads, tracing, webhooks } = parts;
  const stores = createStores(database.sql, {
    idempotencyTtlSeconds: config.idempotencyTtlSeconds,
    preparation,
    reads,
    keyRegistry,
    followsPrimary: config.databaseFollowsPrimary,
    failoverTimeoutMs: config.databaseFailoverTimeoutMs,
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    onEvents: () => webhooks.nudge(),
    traceContext: tracing && (() => tracing.traceparent()),
    groupCommit: groupCommitOptions(tracing, logging),
  });
  const metrics = serviceMetrics(parts, logging);
  const app = await createApp({
    spec,
    handlers: withStores(stores),
    bootstrapKeys: config.bootstrapKeys,
    keyRegistry,
    logging,
    metrics,
    metricsToken: config.metricsToken,
    metricsOnOwnPort: config.metricsPort !== undefined,
    rateLimiter,
    validateResponses: config.validateResponses,
    corsOrigins: config.corsOrigins,
    mcp: config.mcpEnabled ? { loopbackOnly: isLoopbackHost(config.host) } : undefined,
    tracing,
  });
  return { app, metrics, metricsApp: config.metricsPort === undefined ? undefined : createMetricsApp(metrics, config.metricsToken) };
}

/** PORT, and METRICS_PORT when it is set (workers share both). */
async function listenAll({ app, metricsApp }: Service, config: Config): Promise<Listening> {
  const server = createHttpServer(app, config);
  const port = await listen(server, config.port, config.host);
  const metricsServer = metricsApp && createHttpServer(metricsApp, config);
  const metricsPort = metricsServer && (await listen(metricsServer, config.metricsPort as number, config.host));
  return { server, metricsServer, ports: { port, metricsPort } };
}

/**
 * What runs beside the requests, started here once the process listens, each stopped by a step of
 * `shutdownSteps`: reservations idle for 250 ms go back for other instances to spend; expired
 * idempotency keys and old rate-limit windows are swept every minute; the webhook deliveries start,
 * counted, once the database is ready. (The key registry's refresh and the replica's checks run
 * from their making in `build`: requests need them from the first one.)
 */
function startBackground({ rateLimiter, preparation, database, webhooks, metrics }: Service, logger: Logger) {
  const flushing = rateLimiter && setInterval(() => void rateLimiter.flush(250), 200);
  const sweeping = setInterval(() => {
    if (preparation.pendingReason() === undefined)
      sweepExpired(database.sql).catch((err: unknown) => logger.warn({ err }, 'sweeping expired records failed'));
  }, 60_000);
  preparation.done.then(
    () => webhooks.start((result, lagMs) => metrics.webhookAttempt(result.outcome, lagMs === undefined ? undefined : lagMs / 1000)),
    () => {},
  );
  return { stopSweeping: () => clearInterval(sweeping), stopFlushing: () => clearInterval(flushing) };
}

/** The stop, in order: nothing is ended that a step before it still needs. The whole stays within 10 s. */
function shutdownSteps(service: Service, { server, metricsServer }: Listening, background: ReturnType<typeof startBackground>) {
  const { preparation, rateLimiter, reads, keyRegistry, database, tracing, webhooks } = service;
  const steps: ShutdownStep[] = [
    {
      name: 'stopping start-up and the sweep',
      run: () => {
        preparation.cancel();
        background.stopSweeping();
      },
    },
    // Stop accepting; requests in flight finish (up to 8 s) and their connections close. No delivery
    // is claimed any more; attempts in flight finish too, and one cut short is claimed again after its lease.
    {
      name: 'draining the servers and the webhook deliveries',
      run: () => Promise.all([server.drain(8_000), metricsServer?.drain(1_000), webhooks.stop(8_000)]),
    },
    // Every reserved request not spent goes back, if the database takes it quickly.
    {
      name: 'returning unspent reservations',
      run: () => {
        background.stopFlushing();
        return rateLimiter?.flush();
      },
      withinMs: 500,
    },
    { name: 'stopping the replica checks', run: () => reads?.stop() },
    { name: "writing the keys' last uses", run: () => keyRegistry.stop(), withinMs: 500 },
    { name: 'closing the database', run: () => database.close() },
    // The spans of the last requests, exported (within the exporter's timeout) before the process ends.
    { name: 'exporting the last spans', run: () => tracing?.shutdown() },
  ];
  return steps;
}

function stopOnSignals(logger: Logger, steps: readonly ShutdownStep[]): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: stopping`);
    await shutDown(steps, logger);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** A worker tells the primary (which prints the banner once for all); a single process prints it, having waited a moment for the database. */
async function announce(logger: Logger, spec: Spec, config: Config, { database, preparation, keyRegistry }: Service, ports: Ports) {
  // Ready as /readyz says it: migrated, and the keys read (until then a request is answered 503).
  const ready = Promise.all([preparation.done, keyRegistry.ready]).then(([applied]) => applied);
  if (cluster.isWorker) {
    tellPrimary({ listening: ports });
    ready.then(
      (applied) => tellPrimary({ ready: applied }),
      () => {},
    );
    return;
  }
  const applied = await Promise.race([ready, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2_000).unref())]);
  printBanner(logger, {
    spec,
    config,
    database: { url: database.url, embedded: database.embedded !== undefined },
    ports,
    applied,
    processes: 1,
  });
}

/** Operations still generated stubs: listed (they answer 501), or with ALLOW_STUBS=false a refusal to start, naming them. */
function checkStubs(config: Config, logger: Logger): void {
  const stubs = stubsAtStartUp(config.allowStubs);
  if (!stubs?.refuse) return void (stubs && logger.warn(stubs.message));
  logger.fatal(stubs.message);
  process.exit(EXIT_REFUSED);
}

/**
 * A fault nothing handled ends the process, as Node would end it, but as one JSON line an
 * operator's log pipeline reads, saying whether it was a thrown error or a rejected promise.
 */
function exitOnUnhandled(logger: Logger): void {
  process.on('uncaughtException', (err, origin) => {
    logger.fatal({ err, origin }, `${origin === 'unhandledRejection' ? 'unhandled rejection' : 'uncaught exception'}: exiting`);
    process.exit(1);
  });
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // A worker's lines say which worker it is (WEB_CONCURRENCY > 1): what it answered can be told apart.
  const logging = createLogging({
    level: config.logLevel,
    ...(cluster.worker ? { base: { ...LOG_BASE, worker: cluster.worker.id } } : {}),
  });
  const { logger } = logging;
  exitOnUnhandled(logger);
  const spec = await loadSpec();
  // The primary (or the single process) says it once; workers were forked after it did.
  if (!cluster.isWorker) checkStubs(config, logger);
  if (cluster.isPrimary && config.webConcurrency > 1) {
    // With DATABASE_URL: the configuration requires it for more than one process.
    const database = { url: config.databaseUrl as string, embedded: false };
    runPrimary(config, logger, (ports, applied, processes) => printBanner(logger, { spec, config, database, ports, applied, processes }));
    return;
  }
  const service = await build(config, logging, spec);
  const listening = await listenAll(service, config);
  const background = startBackground(service, logger);
  stopOnSignals(logger, shutdownSteps(service, listening, background));
  await announce(logger, spec, config, service, listening.ports);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
