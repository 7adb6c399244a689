/**
 * npm run mock: the API as the contract describes it, without a database: every operation of
 * the spec, whether or not it has a handler yet. Every valid
 * request is answered with the spec's example for the operation; authentication and
 * validation work as in the real service. `Prefer: code=404` asks for another documented
 * response. PORT, HOST and API_KEYS are read as by `npm start`.
 */
import { createServer } from 'node:http';
import { createApp } from '../../src/app';
import { ConfigError, loadConfig } from '../../src/config';
import { loadSpec } from '../../src/contract/spec';
import { createMockHandlers } from '../../src/handlers/mock';
import { createLogging } from '../../src/ops/logger';
import { runTool } from '../lib/tool';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const spec = await loadSpec();
  const logging = createLogging({ level: config.logLevel });
  const { logger } = logging;
  const app = await createApp({
    spec,
    handlers: await createMockHandlers(spec),
    bootstrapKeys: config.bootstrapKeys,
    logging,
    validateResponses: config.validateResponses,
    corsOrigins: config.corsOrigins,
  });
  const server = createServer(app).listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info(
    config.bootstrapKeyGenerated
      ? `API_KEYS is not set; this run accepts one generated key: Authorization: Bearer ${config.bootstrapKeys[0]}`
      : `Accepting the ${config.bootstrapKeys.length} key(s) in API_KEYS`,
  );
  logger.info(
    `Animal Store API ${spec.document.info.version} MOCK (answers from the spec's examples, no database) listening on http://${config.host}:${port}${spec.apiRoot}`,
  );
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

runTool('mock', main, { stack: true, plain: (err) => err instanceof ConfigError });
