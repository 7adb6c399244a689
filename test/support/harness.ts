import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import supertest from 'supertest';
import type { components } from '../../generated/openapi';
import type pino from 'pino';
import type OpenAPIBackend from 'openapi-backend';
import { type App, createApp } from '../../src/app';
import { createBackend } from '../../src/contract/backend';
import { compileEventSerialiser } from '../../src/contract/serialisers';
import { loadConfig } from '../../src/config';
import { type HttpServer, createHttpServer } from '../../src/http/server';
import { ContractChecker } from '../../src/contract/contractChecker';
import { type Spec, loadSpec } from '../../src/contract/spec';
import { withStores } from '../../src/handlers';
import { notImplemented } from '../../src/handlers/stub';
import type { OperationId } from '../../src/contract/handlers';
import type { ResponseValidation } from '../../src/contract/replyCheck';
import { createLogging } from '../../src/ops/logger';
import { createStores } from '../../src/store';
import { petColumns } from '../../src/store/pets/store';
import { type Sql, connect, onlyRow, queriesInFlight } from '../../src/store/database/db';
import { type Metrics, createMetrics } from '../../src/ops/metrics';
import type { StatementHook } from '../../src/ops/tracing';
import { migrate } from '../../src/store/database/migrate';
import { type RateLimit, type RateLimiter, createRateLimiter } from '../../src/store/rateLimits';
import { type KeyRegistry, type KeyRegistryOptions, createKeyRegistry } from '../../src/store/keys/registry';
import { type IssuedKey, createKey } from '../../src/store/keys/admin';
import type { Scope } from '../../generated/security';
import { type TestDatabase, freshDatabase } from './databases';
import { type WebhooksOptions, createWebhooks } from '../../src/webhooks';

export const API_KEY = 'test-key-0123456789abcdef';
export const OTHER_API_KEY = 'other-key-0123456789abcdef';
export const auth = (key = API_KEY) => ({ Authorization: `Bearer ${key}` });

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options';

/** supertest, with every response checked against the spec before the test sees it. */
export type ApiClient = Record<Method, (url: string) => supertest.Test>;

/**
 * The app on the HTTP server production runs (src/http/server.ts, with production's timeouts),
 * which supertest starts on a loopback port for the requests in flight and closes after them.
 */
export function contractClient(app: App, checker: ContractChecker): ApiClient {
  const agent = supertest(createHttpServer(app, loadConfig({ API_KEYS: API_KEY })));
  const call = (method: Method) => (url: string) => agent[method](url).expect((res) => checker.check(method, url, res));
  return {
    get: call('get'),
    post: call('post'),
    put: call('put'),
    patch: call('patch'),
    delete: call('delete'),
    head: call('head'),
    options: call('options'),
  };
}

export interface TestApp {
  app: App;
  spec: Spec;
  api: ApiClient;
  /** The same database the app uses, for arranging rows and reading state back. */
  sql: Sql;
  /** That database's URL: for a session of the test's own, which takes none of the app's pool. */
  databaseUrl: string;
  /** The app's metrics (what its GET /metrics, or METRICS_PORT's app, shows). */
  metrics: Metrics;
  /** The app's rate limiter, when it has one: flush() gives back the requests it reserved and did not spend, as production does at shutdown. */
  rateLimiter: RateLimiter | undefined;
  /** The managed keys the app knows (npm run keys makes them in the same tables), refreshed as in production. */
  keys: KeyRegistry;
  /** The JSON lines the app logged so far, parsed: what an operator's log pipeline would read. */
  logs(): Record<string, any>[];
  close(): Promise<void>;
}

// One spec and one checker per test file, shared by the apps it starts: neither changes once made
// (the checker compiles an operation's response validators the first time it checks one of its
// responses), and loading the spec again for every app of a file took 0.4 s each.
let specLoaded: Promise<Spec> | undefined;
let checkerMade: Promise<ContractChecker> | undefined;
let backendMade: Promise<OpenAPIBackend> | undefined;
export const specOfFile = (): Promise<Spec> => (specLoaded ??= loadSpec());
export const checkerOfFile = (): Promise<ContractChecker> => (checkerMade ??= specOfFile().then((spec) => ContractChecker.create(spec)));
let fileDatabase: Promise<TestDatabase> | undefined;
/** The database of the file's apps started with `database: 'file'`: made by the first, dropped with the run's (globalTeardown). */
const databaseOfFile = (): Promise<TestDatabase> =>
  (fileDatabase ??= freshDatabase({ migrated: true }).then((db) => ({ ...db, drop: async () => {} })));
/** Apps of this file started and not closed. */
let openApps = 0;
/** The spec's openapi-backend, compiled once per file for its apps (createApp's `backend`: 0.15 s an app). */
export const backendOfFile = (): Promise<OpenAPIBackend> => (backendMade ??= specOfFile().then((spec) => createBackend(spec)));

/**
 * The app exactly as production builds it (src/app.ts), on a database of its own,
 * migrated the way start-up migrates it (a copy of the run's migrated template, on a server).
 */
export async function startTestApp(
  options: {
    bootstrapKeys?: string[];
    metricsToken?: string;
    /** As with METRICS_PORT set: the app serves no /metrics. */
    metricsOnOwnPort?: boolean;
    rateLimit?: RateLimit | 'off';
    corsOrigins?: string[] | '*';
    /** How long a request's database work may take (default: production's). */
    deadlineMs?: number;
    /** The app's pool size (DATABASE_POOL_SIZE; default: the run's, 1 on the embedded database). */
    poolSize?: number;
    /** Operations served by the generated stub (501), as before their handler is written. */
    stubs?: OperationId[];
    /** The key registry's timings (refresh, staleness bound, last-use interval); default: production's. */
    keyRegistry?: Omit<KeyRegistryOptions, 'logger'>;
    /** Called as each statement of the app's pool is sent (postgres.js debug): to count them. */
    statements?: StatementHook;
    /** As with MCP_ENABLED=true: /mcp is served (`loopbackOnly` as when HOST is a loopback address). */
    mcp?: { loopbackOnly: boolean };
    /**
     * The delivery worker runs, as in production (default: WEBHOOK_ALLOW_PRIVATE_TARGETS=true, so that
     * receivers on loopback are reached; its schedule and timeout may be shortened). Absent: events
     * are written, and nothing delivers them.
     */
    webhooks?: Partial<WebhooksOptions>;
    /** VALIDATE_RESPONSES (default: off, production's default). */
    validateResponses?: ResponseValidation;
    /**
     * `own` (the default): a database of the app's own, dropped as it closes. `file`: the database
     * the file's apps that ask for it share, for apps that differ in configuration only and whose
     * tests leave no state another would read (a copy and a drop cost 0.3 s of the server's CPU).
     */
    database?: 'own' | 'file';
  } = {},
): Promise<TestApp> {
  // The embedded database is one per worker, and a new one is that one emptied: under an app still
  // open, which goes on with its tables recreated and its key registry's revision gone back.
  const empties = options.database !== 'file' || fileDatabase === undefined;
  if (process.env.TEST_DB_MODE === 'embedded' && empties && openApps > 0)
    throw new Error(`startTestApp: ${openApps} app(s) of this file still open, and the embedded database is theirs: close them first`);
  openApps += 1;
  // The server copies the template while this process reads the spec (the file's first app).
  const copied = options.database === 'file' ? databaseOfFile() : freshDatabase({ migrated: true });
  const spec = await specOfFile();
  const db: TestDatabase = await copied;
  const sql = connect(db.url, { max: options.poolSize ?? db.max, statements: options.statements });
  // As start-up does; on a copy of the migrated template, it finds nothing to apply.
  await migrate(sql);
  const { logging, lines } = captureLogs();
  const keys = createKeyRegistry(sql, { logger: logging.logger, ...options.keyRegistry });
  await keys.ready;
  // Rate limiting is on, as in production, with a limit no ordinary test reaches.
  const rateLimit = options.rateLimit ?? { requests: 1_000_000, windowSeconds: 60 };
  const rateLimiter = rateLimit === 'off' ? undefined : createRateLimiter(sql, rateLimit, logging.logger);
  const allowPrivateTargets = options.webhooks?.allowPrivateTargets ?? true;
  const webhooks =
    options.webhooks &&
    createWebhooks(sql, logging.logger, { ...options.webhooks, allowPrivateTargets, writeEvent: compileEventSerialiser(spec) });
  const handlers = withStores(
    createStores(sql, { idempotencyTtlSeconds: 86_400, allowPrivateTargets, onEvents: webhooks && (() => webhooks.nudge()) }),
  );
  const metrics = createMetrics({ queriesInFlight, webhookBacklog: webhooks && (() => webhooks.backlog()) });
  webhooks?.start((result, lagMs) => metrics.webhookAttempt(result.outcome, lagMs === undefined ? undefined : lagMs / 1000));
  const served = options.stubs?.length
    ? { ...handlers, ...Object.fromEntries(options.stubs.map((op) => [op, notImplemented(op)])) }
    : handlers;
  // VALIDATE_RESPONSES is production's default, off: every response a test receives is checked
  // against the spec by the checker instead (contractClient), without compiling every response
  // validator into each app (0.8 s an app); replyCheck.test.ts tests log and enforce.
  const app = await createApp({
    spec,
    backend: await backendOfFile(),
    handlers: served,
    bootstrapKeys: options.bootstrapKeys ?? [API_KEY, OTHER_API_KEY],
    keyRegistry: keys,
    logging,
    metricsToken: options.metricsToken,
    metrics,
    metricsOnOwnPort: options.metricsOnOwnPort,
    rateLimiter,
    validateResponses: options.validateResponses ?? 'off',
    corsOrigins: options.corsOrigins,
    deadlineMs: options.deadlineMs,
    mcp: options.mcp,
  });
  const checker = await checkerOfFile();
  return {
    app,
    spec,
    api: contractClient(app, checker),
    sql,
    databaseUrl: db.url,
    metrics,
    rateLimiter,
    keys,
    logs: () => lines.map((line) => JSON.parse(line)),
    async close() {
      openApps -= 1;
      await webhooks?.stop(1_000);
      await keys.stop();
      await sql.end();
      await db.drop();
    },
  };
}

/** NewPet as a client sends it: `status` may be left out (the spec's default applies; generated without `--default-non-nullable`). */
export type NewPetBody = components['schemas']['NewPet'];
export type Pet = components['schemas']['Pet'];

/**
 * The HTTP server production runs (`createHttpServer`, short timeouts for tests) serving a file's
 * app on a free loopback port from its `beforeAll` on (declare it after the app's), closed after
 * the file. `port` is read once it listens.
 */
export function productionServerForFile(app: () => App): { readonly port: number } {
  const at = { port: 0 };
  let server: HttpServer | undefined;
  beforeAll(async () => {
    server = createHttpServer(app(), { headersTimeoutMs: 2_000, requestTimeoutMs: 5_000, keepAliveTimeoutMs: 65_000 });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    at.port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));
  return at;
}

/** Serves an app on a free loopback port, for clients that need a real socket (a browser, fetch, raw HTTP). */
export async function listenOnLoopback(app: App): Promise<{ origin: string; port: number; close(): Promise<void> }> {
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The product's logging with its JSON lines kept in memory; `silent` for apps whose logs no test reads. */
export function captureLogs(level: pino.LevelWithSilent = 'info') {
  const lines: string[] = [];
  const logging = createLogging({ level, destination: { write: (line: string) => lines.push(line) } });
  return { logging, lines };
}

/** Resolves once `done()` holds (checked every 10 ms), or fails after `ms`. */
export async function until(done: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`not done within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let clients = 0;
/**
 * A managed key, made as `npm run keys -- create` makes one (every scope by default, a client of
 * its own unless named), once the app's registry knows it.
 */
export async function issueKey(
  t: Pick<TestApp, 'sql' | 'keys'>,
  {
    client,
    scopes = ['pets:read', 'pets:write'],
    expiresInSeconds,
    note,
  }: { client?: string; scopes?: Scope[]; expiresInSeconds?: number; note?: string } = {},
): Promise<IssuedKey> {
  clients += 1;
  const issued = await createKey(t.sql, {
    client: client ?? `client-${process.pid}-${clients}`,
    scopes,
    expiresInSeconds,
    note,
    actor: 'test',
  });
  await until(() => t.keys.lookup(issued.listing.id).state === 'found');
  return issued;
}

let seq = 0;
/** A valid NewPet body, unique per call. */
export function buildNewPet(overrides: Partial<NewPetBody> = {}): NewPetBody {
  seq += 1;
  return { name: `Pet ${seq}`, categoryId: 1000 + seq, ...overrides };
}

/** Inserts one pet directly, bypassing the API. */
export async function insertPet(sql: Sql, pet: Required<NewPetBody>): Promise<Pet> {
  return onlyRow(await insertPets(sql, [pet]), 'INSERT INTO pets');
}

/** Inserts pets directly, bypassing the API, to arrange a test's rows. Returns them in id order. */
export async function insertPets(sql: Sql, pets: Required<NewPetBody>[]): Promise<Pet[]> {
  return sql<Pet[]>`
    INSERT INTO pets ${sql(pets.map((p) => ({ name: p.name, category_id: p.categoryId, status: p.status })))}
    RETURNING ${petColumns(sql)}`.then((rows) => [...rows].sort((a, b) => a.id - b.id));
}

/**
 * The app of a test file: started before its tests, on a database of its own, and closed after
 * them (`const t = testAppForFile();`). Its fields are filled in when the file's tests start, so
 * read them inside tests and hooks.
 */
export function testAppForFile(options?: Parameters<typeof startTestApp>[0]): TestApp {
  const t = {} as TestApp;
  beforeAll(async () => {
    Object.assign(t, await startTestApp(options));
  });
  afterAll(() => t.close());
  return t;
}

/** One failing field as a test names it: where (`in`), the parameter's or header's name or the body's JSON Pointer, and the rule. */
export type Field = [components['schemas']['FieldError']['in'], string, string];

/**
 * The Error body of a 400 exactly: its code and message, and `errors` listing `fields` in order,
 * each with a sentence (`detail`: `details[i]` when given, else any text).
 */
export function badRequest(
  code: 'validation_failed' | 'malformed_json' | 'bad_request',
  message: unknown,
  fields: Field[],
  details: unknown[] = [],
) {
  return {
    code,
    message,
    status: 400,
    errors: fields.map(([place, where, rule], i) => ({
      in: place,
      ...(place === 'body' ? { pointer: where } : place === 'request' || where === '' ? {} : { name: where }),
      rule,
      detail: details[i] ?? expect.any(String),
    })),
  };
}
