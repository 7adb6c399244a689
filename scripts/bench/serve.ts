/**
 * Starts one of the benchmark's baselines or alternatives as its own process:
 *   ts-node scripts/bench/serve.ts node|express|bare|bare-born|openapi-backend|express-openapi-validator|fastify
 * (PORT, DATABASE_URL, API_KEYS, RATE_LIMIT as for the product)
 * Each reads and writes through a store of its own, postgres.js as documented (plainStore.ts); the
 * `express` floor's rate limiter is the product's, on the product's pool.
 * and prints "listening on http://127.0.0.1:<port>/v1" like the product. `bare-born` is the bare
 * floor on a server that makes its requests and responses with express's prototypes, as the
 * product's does (`createHttpServer`): the floor on the product's footing, for information.
 */
import { createServer } from 'node:http';
import postgres from 'postgres-published';
import { expressObjects } from '../../src/http/server';
import { loadConfig } from '../../src/config';
import { connect } from '../../src/store/database/db';
import { createLogging } from '../../src/ops/logger';
import { loadSpec } from '../../src/contract/spec';
import { createBackend } from '../../src/contract/backend';
import { createRateLimiter } from '../../src/store/rateLimits';
import { createExpressOpenApiValidatorAlternative, createOpenApiBackendAlternative } from './alternatives';
import { createExpressBaseline, createNodeBaseline } from './baselines';
import { createFastifyAlternative } from './fastify';
import { createPlainStore } from './plainStore';

const KINDS = ['node', 'express', 'bare', 'bare-born', 'openapi-backend', 'express-openapi-validator', 'fastify'] as const;
const kind = process.argv[2] as (typeof KINDS)[number];
if (!KINDS.includes(kind)) {
  process.stderr.write(`usage: serve.ts ${KINDS.join('|')}\n`);
  process.exit(2);
}
const config = loadConfig(process.env);
if (!config.databaseUrl) {
  process.stderr.write('DATABASE_URL is not set\n');
  process.exit(2);
}
// The contestants' pool: postgres.js as npm publishes it (`postgres-published`, 4.2.0 as package.json pins it:
// none of this repository's patches, which are the product's) and as its README shows it, int8
// read as a number (the contract's ids are JSON numbers); DATABASE_POOL_SIZE as the product reads
// it (npm run bench gives every contestant the same).
const sql = postgres(config.databaseUrl, {
  max: config.databasePoolSize,
  types: { bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) } },
});
async function start(): Promise<void> {
  const spec = await loadSpec();
  const pets = await createPlainStore(sql);
  const logging = createLogging({ level: config.logLevel });
  // The bare floor has no rate limiter (nor log line, metrics or request id).
  const rateLimiter =
    kind === 'express' && config.rateLimit
      ? createRateLimiter(connect(config.databaseUrl as string, { max: 2 }), config.rateLimit, logging.logger)
      : undefined;
  if (kind === 'fastify') {
    const backend = await createBackend(spec);
    const schemas = backend.definition.components?.schemas as Record<string, object>;
    const app = createFastifyAlternative({ spec, schemas, bootstrapKeys: config.bootstrapKeys, pets });
    const address = await app.listen({ port: config.port, host: config.host });
    process.stdout.write(`${kind} baseline listening on ${address}/v1\n`);
    process.on('SIGTERM', () => void app.close().then(() => sql.end({ timeout: 1 }).then(() => process.exit(0))));
    return;
  }
  const flushing = setInterval(() => void rateLimiter?.flush(250), 200);
  const getPetHeaders = spec.operations.get('getPet')?.deprecationHeaders ?? {};
  const floor =
    kind === 'express' || kind === 'bare' || kind === 'bare-born'
      ? createExpressBaseline({
          spec,
          bootstrapKeys: config.bootstrapKeys,
          pets,
          logging: kind === 'express' ? logging : undefined,
          rateLimiter,
        })
      : undefined;
  const listener =
    floor ??
    (kind === 'node'
      ? createNodeBaseline({ spec, bootstrapKeys: config.bootstrapKeys, pets })
      : kind === 'openapi-backend'
        ? await createOpenApiBackendAlternative({ bootstrapKeys: config.bootstrapKeys, pets, getPetHeaders })
        : createExpressOpenApiValidatorAlternative({ bootstrapKeys: config.bootstrapKeys, pets, getPetHeaders }));
  const server = kind === 'bare-born' && floor ? createServer(expressObjects(floor), floor) : createServer(listener);
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  server.listen(config.port, config.host, () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`${kind} baseline listening on http://${config.host}:${port}/v1\n`);
  });
  process.on('SIGTERM', () => {
    clearInterval(flushing);
    server.close();
    server.closeAllConnections();
    void sql.end({ timeout: 1 }).then(() => process.exit(0));
  });
}

void start();
