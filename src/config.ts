import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { LOG_LEVELS, type LogLevel } from './logger';
import { embeddedDataDir } from './paths';

export interface Config {
  host: string;
  port: number;
  /** Unset: the embedded PostgreSQL (PGlite) keeps its data under `.data/`. */
  databaseUrl: string | undefined;
  /** Where the embedded PostgreSQL keeps its files when DATABASE_URL is unset. */
  pgliteDataDir: string;
  apiKeys: string[];
  /** True when API_KEYS was unset and one key was made for this run. */
  apiKeyGenerated: boolean;
  logLevel: LogLevel;
  /** Serving processes (node cluster); more than 1 needs DATABASE_URL. */
  webConcurrency: number;
  /** Unset: GET /metrics is open (keep it off the public network); set: it needs this bearer token. */
  metricsToken: string | undefined;
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

/** The only reader of the environment. Names every problem at once. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const problems: string[] = [];

  const host = env.HOST ?? '127.0.0.1';
  if (host.trim() === '') problems.push('HOST is set but empty');

  let port = 3000;
  if (env.PORT !== undefined) {
    if (!/^[0-9]{1,5}$/.test(env.PORT) || Number(env.PORT) > 65535) {
      problems.push(`PORT must be an integer from 0 to 65535, got ${JSON.stringify(env.PORT)}`);
    } else {
      port = Number(env.PORT);
    }
  }

  let databaseUrl: string | undefined;
  if (env.DATABASE_URL !== undefined) {
    databaseUrl = env.DATABASE_URL;
    let url: URL | undefined;
    try {
      url = new URL(databaseUrl);
    } catch {
      problems.push('DATABASE_URL is not a URL (expected postgres://user@host:port/database)');
    }
    if (url && url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
      problems.push(`DATABASE_URL must start with postgres:// or postgresql://, got ${url.protocol}//`);
    }
  }

  const pgliteDataDir = env.PGLITE_DATA_DIR === undefined ? embeddedDataDir : path.resolve(env.PGLITE_DATA_DIR);
  if (env.PGLITE_DATA_DIR === '') problems.push('PGLITE_DATA_DIR is set but empty');

  let apiKeys: string[] = [];
  let apiKeyGenerated = false;
  if (env.API_KEYS === undefined) {
    apiKeys = [randomBytes(24).toString('base64url')];
    apiKeyGenerated = true;
  } else {
    const entries = env.API_KEYS.split(',').map((k) => k.trim());
    entries.forEach((key, i) => {
      const which = `API_KEYS entry ${i + 1}`;
      if (key === '') problems.push(`${which} is empty`);
      else if (!TOKEN.test(key)) problems.push(`${which} has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)`);
      else if (key.length < MIN_API_KEY_LENGTH) problems.push(`${which} is shorter than ${MIN_API_KEY_LENGTH} characters`);
    });
    apiKeys = entries;
  }

  const logLevel = (env.LOG_LEVEL ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(env.LOG_LEVEL)}`);

  let webConcurrency = 1;
  if (env.WEB_CONCURRENCY !== undefined) {
    if (!/^[0-9]{1,2}$/.test(env.WEB_CONCURRENCY) || Number(env.WEB_CONCURRENCY) < 1 || Number(env.WEB_CONCURRENCY) > 64) {
      problems.push(`WEB_CONCURRENCY must be an integer from 1 to 64, got ${JSON.stringify(env.WEB_CONCURRENCY)}`);
    } else {
      webConcurrency = Number(env.WEB_CONCURRENCY);
      if (webConcurrency > 1 && env.DATABASE_URL === undefined) problems.push('WEB_CONCURRENCY above 1 needs DATABASE_URL: the embedded PostgreSQL serves one process');
    }
  }

  const metricsToken = env.METRICS_TOKEN;
  if (metricsToken !== undefined && (!TOKEN.test(metricsToken) || metricsToken.length < MIN_API_KEY_LENGTH)) {
    problems.push(`METRICS_TOKEN must be at least ${MIN_API_KEY_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + /`);
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return { host, port, databaseUrl, pgliteDataDir, apiKeys, apiKeyGenerated, logLevel, webConcurrency, metricsToken };
}
