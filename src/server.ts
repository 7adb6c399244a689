import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { createApp } from './app';
import { type Config, ConfigError, loadConfig } from './config';
import { connect, type EmbeddedPostgres, type Sql, startEmbeddedPostgres } from './db';
import { type Logger, createLogger } from './logger';
import { type Spec, loadSpec } from './spec';
import { createStores } from './store';
import { migrate } from './store/migrate';

function describeDatabase(config: Config, url: string, applied: number[]): string {
  const u = new URL(url);
  const where = config.databaseUrl === undefined ? `embedded PostgreSQL (PGlite), data in ${config.pgliteDataDir}` : `PostgreSQL at ${u.hostname}:${u.port || 5432}${u.pathname}`;
  return `Database: ${where}${applied.length ? `; applied migrations ${applied.join(', ')}` : ''}`;
}

/** The short banner: database, key hint, docs, and last the URL (tools wait for "listening on"). */
function banner(logger: Logger, spec: Spec, config: Config, origin: string, database: string, processes: number): void {
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
  log(`Animal Store API ${spec.document.info.version} listening on ${origin}${spec.apiRoot}${processes > 1 ? ` (${processes} processes)` : ''}`);
}

const originOf = (config: Config, port: number) => `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
const portOf = (server: Server, fallback: number) => {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : fallback;
};

/** One serving process: the app on a pool, until SIGTERM. */
async function serve(config: Config, logger: Logger, spec: Spec, sql: Sql, onStopped: () => Promise<void>): Promise<Server> {
  const app = await createApp({ spec, apiKeys: config.apiKeys, ...createStores(sql), logger, metricsToken: config.metricsToken });
  const server: Server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: stopping`);
    // Stop accepting, let requests in flight finish (up to 10 s), then end the pool.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(resolve, 10_000).unref();
    });
    server.closeAllConnections();
    await sql.end({ timeout: 5 });
    await onStopped();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return server;
}

/** WEB_CONCURRENCY > 1: this process migrates, forks the workers that serve, and stops them on SIGTERM. */
async function primary(config: Config, logger: Logger, spec: Spec, databaseUrl: string): Promise<void> {
  const sql = connect(databaseUrl, { max: 1 });
  const applied = await migrate(sql);
  await sql.end();
  // Every worker accepts the same keys, the generated one included.
  const env = { API_KEYS: config.apiKeys.join(',') };
  const workers = Array.from({ length: config.webConcurrency }, () => cluster.fork(env));
  let listening = 0;
  cluster.on('listening', (_worker, address) => {
    listening += 1;
    if (listening === workers.length) banner(logger, spec, config, originOf(config, address.port), describeDatabase(config, databaseUrl, applied), workers.length);
  });
  let stopping = false;
  cluster.on('exit', (worker, code, signal) => {
    workers.splice(workers.indexOf(worker), 1);
    if (!stopping) {
      logger.error(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
      workers.push(cluster.fork(env));
    } else if (workers.length === 0) {
      process.exit(0);
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

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const spec = loadSpec();

  if (cluster.isWorker) {
    // Forked by the primary, which migrated the database and prints the banner.
    await serve(config, logger, spec, connect(config.databaseUrl as string, { max: 10 }), async () => {});
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
  const sql = connect(databaseUrl, { max: embedded ? 1 : 10 });
  const applied = await migrate(sql);
  const server = await serve(config, logger, spec, sql, async () => embedded?.stop());
  banner(logger, spec, config, originOf(config, portOf(server, config.port)), describeDatabase(config, databaseUrl, applied), 1);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
