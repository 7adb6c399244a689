import type { Logger } from './logger';

/** Where the database is, as the banner says it (from the configuration and the URL connected to). */
export interface DatabaseFacts {
  /** The URL connected to: DATABASE_URL, or the embedded server's. */
  url: string;
  /** The embedded PostgreSQL's data folder; undefined with DATABASE_URL. */
  embeddedDataDir: string | undefined;
  poolSize: number;
  poolMode: string;
  replicaUrl: string | undefined;
  replicaMaxLagMs: number;
}

/** A PostgreSQL URL's hosts (several, comma-separated, for a failover pair), path and target_session_attrs, without credentials. */
function serversOf(url: string): { hosts: string; path: string; attrs: string | undefined } {
  const [, hosts = '', path = '', query = ''] = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?([^/?#]*)([^?#]*)(?:\?([^#]*))?/i.exec(url) ?? [];
  const attrs = new URLSearchParams(query).get('target_session_attrs') ?? undefined;
  return { hosts: hosts.includes(':') || hosts.includes(',') ? hosts : `${hosts}:5432`, path, attrs };
}

/** The banner's line on the database; `applied` undefined: it has not answered yet. */
export function describeDatabase(db: DatabaseFacts, applied: number[] | undefined): string {
  const u = serversOf(db.url);
  const which = u.attrs === undefined ? '' : ` (the one with target_session_attrs=${u.attrs})`;
  const where =
    db.embeddedDataDir !== undefined
      ? `embedded PostgreSQL (PGlite), data in ${db.embeddedDataDir}`
      : `PostgreSQL at ${u.hosts}${u.path}${which}`;
  const replica = db.replicaUrl
    ? `; reads from the replica at ${serversOf(db.replicaUrl).hosts} while it is within ${db.replicaMaxLagMs} ms`
    : '';
  const pool =
    db.embeddedDataDir !== undefined
      ? ''
      : ` (pool of ${db.poolSize} per process${db.poolMode === 'transaction' ? ', for a transaction-mode pooler' : ''}${replica})`;
  if (applied === undefined) return `Database: ${where}${pool}, not reachable yet; answering 503 until it is`;
  return `Database: ${where}${pool}${applied.length ? `; applied migrations ${applied.join(', ')}` : ''}`;
}

export interface BannerFacts {
  title: string;
  version: string;
  apiRoot: string;
  /** The keys accepted; `generated`: API_KEYS was not set and the one key was made for this run. */
  keys: { count: number; generated: string | undefined };
  /** The API's origin, and METRICS_PORT's when it is set. */
  origin: string;
  metricsOrigin: string | undefined;
  database: string;
  processes: number;
  /** MCP_ENABLED: /mcp is served. */
  mcp: boolean;
}

/** Said first, as a warning, by a process on the embedded PostgreSQL (before its banner). */
export const EMBEDDED_WARNING =
  'The embedded PostgreSQL (PGlite) runs without fsync: for development and tests; set DATABASE_URL in production';

/** The short banner: database, key hint, docs, and last the URL (tools wait for "listening on"). */
export function banner(logger: Logger, facts: BannerFacts): void {
  const log = (msg: string) => logger.info(msg);
  const { origin } = facts;
  log(facts.database);
  if (facts.keys.generated !== undefined) {
    log('API_KEYS is not set; this run accepts one generated key:');
    log(`  Authorization: Bearer ${facts.keys.generated}`);
    log(`Try: curl -H 'Authorization: Bearer ${facts.keys.generated}' ${origin}${facts.apiRoot}/pets`);
  } else {
    log(`Accepting the ${facts.keys.count} key(s) in API_KEYS`);
  }
  log(`API reference: ${origin}/docs/ (contract: ${origin}/openapi.yaml)`);
  if (facts.mcp) log(`MCP: ${origin}/mcp (MCP_ENABLED; docs/mcp.md), with the same keys`);
  if (facts.metricsOrigin !== undefined) log(`Metrics: ${facts.metricsOrigin}/metrics (METRICS_PORT; not on ${origin})`);
  log(
    `${facts.title} ${facts.version} listening on ${origin}${facts.apiRoot}${facts.processes > 1 ? ` (${facts.processes} processes)` : ''}`,
  );
}

/** What the banner reads of the configuration (the service's Config has these). */
export interface BannerConfig {
  host: string;
  bootstrapKeys: readonly string[];
  bootstrapKeyGenerated: boolean;
  pgliteDataDir: string;
  databasePoolSize: number;
  databasePoolMode: string;
  databaseReplicaUrl: string | undefined;
  databaseReplicaMaxLagMs: number;
  mcpEnabled: boolean;
}

/** What the banner says of one process, or of the primary for its workers. */
export interface ServiceFacts {
  /** The contract's title and version, and its API root (the service's Spec has these). */
  spec: { apiRoot: string; document: { info: { title: string; version: string } } };
  config: BannerConfig;
  /** The URL connected to, and whether it is the embedded server. */
  database: { url: string; embedded: boolean };
  ports: { port: number; metricsPort?: number };
  /** The migrations applied; undefined: the database has not answered yet. */
  applied: number[] | undefined;
  processes: number;
}

/** The origin a browser uses for HOST and a port (an IPv6 address in brackets). */
const originOf = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/** The banner of a serving process (or of the primary, for its workers), its facts read from what the service is. */
export function printBanner(logger: Logger, { spec, config, database, ports, applied, processes }: ServiceFacts): void {
  const facts: DatabaseFacts = {
    url: database.url,
    embeddedDataDir: database.embedded ? config.pgliteDataDir : undefined,
    poolSize: config.databasePoolSize,
    poolMode: config.databasePoolMode,
    replicaUrl: config.databaseReplicaUrl,
    replicaMaxLagMs: config.databaseReplicaMaxLagMs,
  };
  banner(logger, {
    title: spec.document.info.title,
    version: spec.document.info.version,
    apiRoot: spec.apiRoot,
    keys: { count: config.bootstrapKeys.length, generated: config.bootstrapKeyGenerated ? config.bootstrapKeys[0] : undefined },
    origin: originOf(config.host, ports.port),
    metricsOrigin: ports.metricsPort === undefined ? undefined : originOf(config.host, ports.metricsPort),
    database: describeDatabase(facts, applied),
    processes,
    mcp: config.mcpEnabled,
  });
}
