import type { Server } from 'node:http';
import { createApp } from './app';
import { ConfigError, loadConfig } from './config';
import { connect, type EmbeddedPostgres, startEmbeddedPostgres } from './db';
import { createLogger } from './logger';
import { loadSpec } from './spec';
import { migrate } from './store/migrate';
import { createPetStore } from './store/pets';


function describeDatabase(url: string): string {
  const u = new URL(url);
  return `PostgreSQL at ${u.hostname}:${u.port || 5432}${u.pathname}`;
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const log = (msg: string) => logger.info(msg);
  const spec = loadSpec();

  let embedded: EmbeddedPostgres | undefined;
  let databaseUrl = config.databaseUrl;
  if (databaseUrl === undefined) {
    embedded = await startEmbeddedPostgres(config.pgliteDataDir);
    databaseUrl = embedded.url;
  }
  // PGlite serves one session at a time; a real server gets a pool.
  const sql = connect(databaseUrl, { max: embedded ? 1 : 10 });
  const applied = await migrate(sql);

  const app = await createApp({ spec, apiKeys: config.apiKeys, pets: createPetStore(sql), logger });
  const server: Server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  log(`Animal Store API ${spec.document.info.version} listening on http://${host}:${port}${spec.apiRoot}`);
  log(`Database: ${embedded ? `embedded PostgreSQL (PGlite), data in ${config.pgliteDataDir}` : describeDatabase(databaseUrl)}${applied.length ? `; applied migrations ${applied.join(', ')}` : ''}`);
  if (config.apiKeyGenerated) {
    log(`API_KEYS is not set; this run accepts one generated key:`);
    log(`  Authorization: Bearer ${config.apiKeys[0]}`);
    log(`Try: curl -H 'Authorization: Bearer ${config.apiKeys[0]}' http://${host}:${port}${spec.apiRoot}/pets`);
  } else {
    log(`Accepting the ${config.apiKeys.length} key(s) in API_KEYS`);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    // Stop accepting, let requests in flight finish (up to 10 s), then end the pool.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(resolve, 10_000).unref();
    });
    server.closeAllConnections();
    await sql.end({ timeout: 5 });
    await embedded?.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
