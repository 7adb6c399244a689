import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { RESPONSE_VALIDATION, type ResponseValidation } from '../contract/replyCheck';
import { LOG_LEVELS, type LogLevel } from '../ops/logger';
import type { TracingConfig } from '../ops/tracing';
import { embeddedDataDir } from '../paths';
import type { PoolMode } from '../store/database/db';
import { KEY_PREFIX } from '../store/keys/format';
import type { RateLimit } from '../store/rateLimits';
import { parseTracing } from './tracing';
import { PRIMARY_SESSION_ATTRS, REPLICA_SESSION_ATTRS, integerVar, readPostgresUrl } from './values';

/** HOST names a loopback address: only this machine reaches the service (and /mcp's Host must name loopback too). */
export const isLoopbackHost = (host: string) => host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

export interface Config {
  host: string;
  port: number;
  /** Unset: the embedded PostgreSQL (PGlite) keeps its data under `.data/`. */
  databaseUrl: string | undefined;
  /**
   * DATABASE_URL names the server to use by what it is (`target_session_attrs=primary` or
   * `read-write`, usually with several hosts): while none qualifies, /readyz says `database_failover`.
   */
  databaseFollowsPrimary: boolean;
  /**
   * With `databaseFollowsPrimary`: how long a failover may take, as a create whose COMMIT was in
   * flight when its server was lost sees it: its outcome is asked of the promoted server until then.
   */
  databaseFailoverTimeoutMs: number;
  /** Where the embedded PostgreSQL keeps its files when DATABASE_URL is unset. */
  pgliteDataDir: string;
  /** Connections each process keeps to DATABASE_URL (and to the replica). */
  databasePoolSize: number;
  /** `transaction` behind a transaction-mode pooler (PgBouncer): no named prepared statements, no startup parameters. */
  databasePoolMode: PoolMode;
  /** A streaming replica that listPets and getPet read from; undefined: every read goes to DATABASE_URL. */
  databaseReplicaUrl: string | undefined;
  /** A replica further behind than this (or down) is skipped: reads go to the primary. */
  databaseReplicaMaxLagMs: number;
  /** API_KEYS: the bootstrap keys, every scope, no expiry (the managed keys are the database's). */
  bootstrapKeys: string[];
  /** True when API_KEYS was unset and one key was made for this run. */
  bootstrapKeyGenerated: boolean;
  logLevel: LogLevel;
  /** Serving processes (node cluster); more than 1 needs DATABASE_URL. */
  webConcurrency: number;
  /** Unset: GET /metrics is open (keep it off the public network); set: it needs this bearer token. */
  metricsToken: string | undefined;
  /** METRICS_PORT: GET /metrics is served on this port of HOST (every metric), and not on PORT. */
  metricsPort: number | undefined;
  /** Requests each client (all of its API keys) may make per window, counted across every instance; undefined: no limit. */
  rateLimit: RateLimit | undefined;
  /** How long an Idempotency-Key is remembered, in seconds. */
  idempotencyTtlSeconds: number;
  /** Node's HTTP server timeouts, in milliseconds (see the configuration table in docs/operations.md). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** A database with fsync or synchronous_commit off: refuse to serve on it, or serve and log an error. */
  onUnsafeDatabase: 'refuse' | 'warn';
  /** Start while some operations are still generated stubs (answering 501), listing them; false: refuse to start. */
  allowStubs: boolean;
  /** Check each handler's reply against the spec: off, log (and count) a violation, or enforce (answer 500 instead). */
  validateResponses: ResponseValidation;
  /** Web origins allowed to call the API from a browser (CORS); `*` any; undefined: no CORS headers. */
  corsOrigins: string[] | '*' | undefined;
  /** MCP_ENABLED: serve the MCP endpoint at /mcp (default false). */
  mcpEnabled: boolean;
  /**
   * WEBHOOK_ALLOW_PRIVATE_TARGETS (default false): webhook endpoints may be `http` and name loopback
   * and private addresses, for local development and tests; never in production.
   */
  webhookAllowPrivateTargets: boolean;
  /** OpenTelemetry traces (OTEL_* variables); off unless OTEL_TRACES_EXPORTER names an exporter. */
  tracing: TracingConfig;
}

/** `*`, or comma-separated origins such as `https://app.example.com,http://localhost:5173`. */
export function parseCorsOrigins(text: string | undefined, problems: string[]): string[] | '*' | undefined {
  if (text === undefined) return undefined;
  if (text.trim() === '*') return '*';
  const entries = text.split(',').map((o) => o.trim());
  entries.forEach((origin, i) => {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      // reported below
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
      problems.push(
        `CORS_ORIGINS entry ${i + 1} must be an origin such as https://app.example.com (scheme, host and port only, no path or trailing slash) or the whole value *, got ${JSON.stringify(origin)}`,
      );
    }
  });
  return entries;
}

export const DEFAULT_RATE_LIMIT = '6000/1m';
const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;

/** `6000/1m`, `100/1s`, `50000/1h`, or `off`. */
export function parseRateLimit(text: string): RateLimit | undefined | Error {
  if (text === 'off') return undefined;
  const [, requests, count = '1', unit] = /^([1-9][0-9]{0,8})\/([1-9][0-9]{0,3})?([smh])$/.exec(text) ?? [];
  if (requests === undefined || (unit !== 's' && unit !== 'm' && unit !== 'h')) {
    return new Error(`RATE_LIMIT must be <requests>/<window> such as 6000/1m, 100/1s or 50000/1h, or off; got ${JSON.stringify(text)}`);
  }
  return { requests: Number(requests), windowSeconds: Number(count) * UNIT_SECONDS[unit] };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

// RFC 6750 b64token: the characters a bearer token may contain.
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
export const MIN_API_KEY_LENGTH = 16;

/**
 * API_KEYS: comma-separated bearer keys for development and bootstrap, each with every scope and no
 * expiry, changed only by a restart; unset, one random key for this run (printed by the banner).
 * Managed keys (`npm run keys`) are the ones to give clients; their prefix is theirs alone.
 */
function bootstrapKeysOf(value: string | undefined, problems: string[]): { bootstrapKeys: string[]; bootstrapKeyGenerated: boolean } {
  if (value === undefined) {
    let key = randomBytes(24).toString('base64url');
    // One in 16.7 million would begin as a managed key does, and be read as one.
    while (key.startsWith(KEY_PREFIX)) key = randomBytes(24).toString('base64url');
    return { bootstrapKeys: [key], bootstrapKeyGenerated: true };
  }
  const entries = value.split(',').map((k) => k.trim());
  entries.forEach((key, i) => {
    const which = `API_KEYS entry ${i + 1}`;
    if (key === '') problems.push(`${which} is empty`);
    else if (!TOKEN.test(key))
      problems.push(`${which} has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)`);
    else if (key.length < MIN_API_KEY_LENGTH) problems.push(`${which} is shorter than ${MIN_API_KEY_LENGTH} characters`);
    else if (key.startsWith(KEY_PREFIX))
      problems.push(`${which} starts with ${KEY_PREFIX}, the prefix of managed keys (npm run keys): an API_KEYS key must not`);
  });
  return { bootstrapKeys: entries, bootstrapKeyGenerated: false };
}

/** The pool and the read replica: DATABASE_POOL_SIZE, DATABASE_POOL_MODE, DATABASE_REPLICA_URL and its lag bound. */
function poolOf(env: NodeJS.ProcessEnv, problems: string[]) {
  const databasePoolSize = integerVar(env, 'DATABASE_POOL_SIZE', 10, 1, 1000, problems);
  const databasePoolMode = (env.DATABASE_POOL_MODE ?? 'session') as PoolMode;
  if (databasePoolMode !== 'session' && databasePoolMode !== 'transaction')
    problems.push(`DATABASE_POOL_MODE must be session or transaction, got ${JSON.stringify(env.DATABASE_POOL_MODE)}`);
  const databaseReplicaUrl = env.DATABASE_REPLICA_URL;
  if (databaseReplicaUrl !== undefined) {
    if (env.DATABASE_URL === undefined) problems.push('DATABASE_REPLICA_URL needs DATABASE_URL: the embedded PostgreSQL has no replica');
    const read = readPostgresUrl('DATABASE_REPLICA_URL', databaseReplicaUrl, REPLICA_SESSION_ATTRS);
    if (Array.isArray(read)) problems.push(...read);
  }
  const databaseReplicaMaxLagMs = integerVar(env, 'DATABASE_REPLICA_MAX_LAG_MS', 1000, 0, 600_000, problems);
  return { databasePoolSize, databasePoolMode, databaseReplicaUrl, databaseReplicaMaxLagMs };
}

/**
 * DATABASE_URL: one server, or several with `target_session_attrs=primary` (or `read-write`), of
 * which the service uses the one that takes writes, and follows it when another is promoted.
 */
function databaseUrlOf(databaseUrl: string | undefined, problems: string[]): { databaseFollowsPrimary: boolean } {
  if (databaseUrl === undefined) return { databaseFollowsPrimary: false };
  const read = readPostgresUrl('DATABASE_URL', databaseUrl, PRIMARY_SESSION_ATTRS);
  if (Array.isArray(read)) {
    problems.push(...read);
    return { databaseFollowsPrimary: false };
  }
  if (read.hosts.length > 1 && read.targetSessionAttrs === undefined)
    problems.push(
      `DATABASE_URL lists ${read.hosts.length} hosts without target_session_attrs: add ?target_session_attrs=primary, so that the service connects to the one that takes writes`,
    );
  return { databaseFollowsPrimary: read.targetSessionAttrs !== undefined };
}

/** A variable that is `true` or `false`, or unset (its default). */
function switchVar(value: string | undefined, name: string, fallback: boolean, problems: string[]): boolean {
  if (value === undefined) return fallback;
  if (value !== 'true' && value !== 'false') problems.push(`${name} must be true or false, got ${JSON.stringify(value)}`);
  return value === 'true';
}

/** ALLOW_STUBS (default true), MCP_ENABLED and WEBHOOK_ALLOW_PRIVATE_TARGETS (default false). */
const switchesOf = (env: NodeJS.ProcessEnv, problems: string[]) => ({
  allowStubs: switchVar(env.ALLOW_STUBS, 'ALLOW_STUBS', true, problems),
  mcpEnabled: switchVar(env.MCP_ENABLED, 'MCP_ENABLED', false, problems),
  webhookAllowPrivateTargets: switchVar(env.WEBHOOK_ALLOW_PRIVATE_TARGETS, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false, problems),
});

/** The only reader of the environment. Names every problem at once. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const problems: string[] = [];

  const host = env.HOST ?? '127.0.0.1';
  if (host.trim() === '') problems.push('HOST is set but empty');

  const port = integerVar(env, 'PORT', 3000, 0, 65535, problems);

  const databaseUrl = env.DATABASE_URL;
  const { databaseFollowsPrimary } = databaseUrlOf(databaseUrl, problems);
  // The embedded PostgreSQL is a development dependency: production (the image) names its server.
  if (env.NODE_ENV === 'production' && databaseUrl === undefined)
    problems.push(
      'DATABASE_URL must be set when NODE_ENV=production: the embedded PostgreSQL (PGlite) is for development and is not installed with --omit=dev',
    );
  const databaseFailoverTimeoutMs = integerVar(env, 'DATABASE_FAILOVER_TIMEOUT_MS', 30_000, 1_000, 600_000, problems);

  const pgliteDataDir = env.PGLITE_DATA_DIR === undefined ? embeddedDataDir : path.resolve(env.PGLITE_DATA_DIR);
  if (env.PGLITE_DATA_DIR === '') problems.push('PGLITE_DATA_DIR is set but empty');

  const { bootstrapKeys, bootstrapKeyGenerated } = bootstrapKeysOf(env.API_KEYS, problems);

  const logLevel = (env.LOG_LEVEL ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(env.LOG_LEVEL)}`);

  const { databasePoolSize, databasePoolMode, databaseReplicaUrl, databaseReplicaMaxLagMs } = poolOf(env, problems);

  const webConcurrency = integerVar(env, 'WEB_CONCURRENCY', 1, 1, 64, problems);
  if (webConcurrency > 1 && env.DATABASE_URL === undefined)
    problems.push('WEB_CONCURRENCY above 1 needs DATABASE_URL: the embedded PostgreSQL serves one process');

  const metricsToken = env.METRICS_TOKEN;
  if (metricsToken !== undefined && (!TOKEN.test(metricsToken) || metricsToken.length < MIN_API_KEY_LENGTH)) {
    problems.push(`METRICS_TOKEN must be at least ${MIN_API_KEY_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + /`);
  } else if (metricsToken?.startsWith(KEY_PREFIX)) {
    problems.push(`METRICS_TOKEN starts with ${KEY_PREFIX}, the prefix of managed API keys: choose another token`);
  }

  const metricsPort = env.METRICS_PORT === undefined ? undefined : integerVar(env, 'METRICS_PORT', 0, 0, 65535, problems);
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port)
    problems.push(`METRICS_PORT must differ from PORT (${port}): metrics are served on a port of their own`);

  const rateLimit = parseRateLimit(env.RATE_LIMIT ?? DEFAULT_RATE_LIMIT);
  if (rateLimit instanceof Error) problems.push(rateLimit.message);

  const idempotencyTtlSeconds = integerVar(env, 'IDEMPOTENCY_TTL_SECONDS', 86_400, 60, 30 * 86_400, problems);
  const headersTimeoutMs = integerVar(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000, problems);
  const requestTimeoutMs = integerVar(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000, problems);
  const keepAliveTimeoutMs = integerVar(env, 'KEEP_ALIVE_TIMEOUT_MS', 65_000, 100, 3_600_000, problems);
  const onUnsafeDatabase = (env.ON_UNSAFE_DATABASE ?? 'refuse') as Config['onUnsafeDatabase'];
  if (onUnsafeDatabase !== 'refuse' && onUnsafeDatabase !== 'warn')
    problems.push(`ON_UNSAFE_DATABASE must be refuse or warn, got ${JSON.stringify(env.ON_UNSAFE_DATABASE)}`);
  const { allowStubs, mcpEnabled, webhookAllowPrivateTargets } = switchesOf(env, problems);
  const validateResponses = (env.VALIDATE_RESPONSES ?? 'off') as ResponseValidation;
  if (!RESPONSE_VALIDATION.includes(validateResponses))
    problems.push(`VALIDATE_RESPONSES must be one of ${RESPONSE_VALIDATION.join(', ')}, got ${JSON.stringify(env.VALIDATE_RESPONSES)}`);
  const corsOrigins = parseCorsOrigins(env.CORS_ORIGINS, problems);
  const tracing = parseTracing(env, problems);
  if (requestTimeoutMs < headersTimeoutMs)
    problems.push(`REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must not be below HEADERS_TIMEOUT_MS (${headersTimeoutMs})`);

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    host,
    port,
    databaseUrl,
    databaseFollowsPrimary,
    databaseFailoverTimeoutMs,
    pgliteDataDir,
    databasePoolSize,
    databasePoolMode,
    databaseReplicaUrl,
    databaseReplicaMaxLagMs,
    bootstrapKeys,
    bootstrapKeyGenerated,
    logLevel,
    webConcurrency,
    metricsToken,
    metricsPort,
    rateLimit: rateLimit as RateLimit | undefined,
    idempotencyTtlSeconds,
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs,
    onUnsafeDatabase,
    allowStubs,
    validateResponses,
    corsOrigins,
    mcpEnabled,
    webhookAllowPrivateTargets,
    tracing,
  };
}
