/**
 * The benchmark's baselines, measuring tools kept beside the product. They implement the
 * same contract over a store of their own, postgres.js as documented (plainStore.ts: one plain
 * statement per operation), with the same bearer check (`createAuthenticator`), the same exact
 * JSON parsing (`readJsonBody`) and the same Error bodies, and the contract's checks written
 * by hand (checks.ts) instead of derived from the spec:
 *
 * - `node`: node:http and nothing else — the limit.
 * - `bare`: express 5 with the same checks and none of the
 *   production features (no security headers, metrics, log line, request id or rate
 *   limiter), so that product/bare is the price of the contract layer and the production
 *   features together.
 * - `express`: the bare floor plus the product's operational middleware (security headers,
 *   metrics, log line, rate limiter): not a contestant of `npm run bench` any more (its
 *   target was withdrawn), kept for A/B runs of those features (serve.ts express).
 *
 * The alternatives built on other libraries are in alternatives.ts.
 */
import { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import express from 'express';
import { type PlainStore, listPage } from './plainStore';
import { checkListQuery, checkNewPet, checkPetId } from './checks';
import {
  BODY_LIMIT_BYTES,
  type Deadline,
  HttpError,
  type Logging,
  type RateLimiter,
  type Spec,
  bodyOf,
  createAuthenticator,
  createMetrics,
  createRequestRecorder,
  deprecatedOperations,
  errorMiddleware,
  parseJsonExactly,
  queriesInFlight,
  rateLimitHeaders,
  rateLimited,
  readJsonBody,
  requestDeadline,
  requestLog,
  sendError,
  streamedBody,
  toHttpError,
  unauthorizedError,
} from './shared';

export interface BaselineDeps {
  spec: Spec;
  bootstrapKeys: readonly string[];
  pets: PlainStore;
}

const PET = /^\/v1\/pets\/([^/]+)\/?$/;
const PETS = /^\/v1\/pets\/?$/;
const API_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' };

/** Which operation a path and method name, or the 404/405 to answer. */
function route(method: string, path: string): { op: 'listPets' | 'createPet' | 'getPet'; petId?: string } {
  const m = method === 'HEAD' ? 'GET' : method;
  if (PETS.test(path)) {
    if (m === 'GET') return { op: 'listPets' };
    if (m === 'POST') return { op: 'createPet' };
    throw new HttpError(405, 'method_not_allowed', `${method} is not allowed here; allowed: GET, HEAD, POST, OPTIONS`, {
      Allow: 'GET, HEAD, POST, OPTIONS',
    });
  }
  const pet = PET.exec(path);
  if (pet) {
    if (m === 'GET') return { op: 'getPet', petId: pet[1] };
    throw new HttpError(405, 'method_not_allowed', `${method} is not allowed here; allowed: GET, HEAD, OPTIONS`, {
      Allow: 'GET, HEAD, OPTIONS',
    });
  }
  throw new HttpError(404, 'not_found', `No route ${method} ${path}`);
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The body of a node:http request, as the product reads it: media type, 16 KiB, UTF-8, exact numbers. */
async function readBody(req: IncomingMessage): Promise<unknown> {
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return undefined;
  const [type, ...params] = (req.headers['content-type'] ?? '').split(';').map((s) => s.trim().toLowerCase());
  if (type !== 'application/json')
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Type must be application/json, got ${JSON.stringify(req.headers['content-type'] ?? 'none')}`,
    );
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice(8)
    .replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    throw new HttpError(415, 'unsupported_media_type', `JSON must be sent as UTF-8, got charset ${charset}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) throw new HttpError(413, 'payload_too_large', `The request body exceeds ${BODY_LIMIT_BYTES} bytes`);
    chunks.push(chunk);
  }
  let text: string;
  try {
    text = decoder.decode(Buffer.concat(chunks));
  } catch {
    throw new HttpError(400, 'malformed_json', 'The request body is not valid UTF-8');
  }
  return text.trim() === '' ? undefined : parseJsonExactly(text);
}

/** The limit: node:http, hand-written routing, checks and responses. */
export function createNodeBaseline({ spec, bootstrapKeys, pets }: BaselineDeps): RequestListener {
  const authenticate = createAuthenticator({ bootstrapKeys, scopes: spec.scopes });
  const deprecation = spec.operations.get('getPet')?.deprecationHeaders ?? {};
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      ...API_HEADERS,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const [path, search = ''] = (req.url ?? '/').split('?', 2);
    let extra: Record<string, string> = {};
    try {
      const auth = authenticate(req.headers, req.rawHeaders);
      if (!auth.ok) throw unauthorizedError(auth);
      const { op, petId } = route(req.method ?? 'GET', path ?? '/');
      if (op === 'getPet') extra = deprecation;
      if (op === 'listPets') {
        const page = await listPage(pets, checkListQuery(new URLSearchParams(search)), path as string);
        return send(res, page.status, page.body, page.headers);
      }
      if (op === 'getPet') {
        const id = checkPetId(decodeURIComponent(petId as string));
        const pet = await pets.get(id);
        if (!pet) throw new HttpError(404, 'not_found', `No animal has id ${id}`);
        return send(res, 200, pet, extra);
      }
      if (search !== '') throw new HttpError(400, 'validation_failed', 'createPet takes no query parameters');
      return send(res, 201, await pets.create(checkNewPet(await readBody(req))));
    } catch (err) {
      const failure = toHttpError(err);
      send(res, failure.status, bodyOf(failure), { ...extra, ...failure.headers });
    }
  };
  // Every failure is answered inside handle: nothing is left to reject.
  return (req, res) => void handle(req, res);
}

export interface ExpressFloorDeps extends BaselineDeps {
  /** Absent: the bare floor, without the operational middleware (log line, metrics, request id, security headers). */
  logging?: Logging;
  rateLimiter?: RateLimiter;
}

/**
 * The floor: express 5 and the product's operational middleware, with hand-written checks
 * instead of the OpenAPI layer. Without a logger (and rate limiter): the bare floor.
 */
export function createExpressBaseline({ spec, bootstrapKeys, pets, logging, rateLimiter }: ExpressFloorDeps): express.Express {
  const authenticate = createAuthenticator({ bootstrapKeys, scopes: spec.scopes });
  const deprecation = spec.operations.get('getPet')?.deprecationHeaders ?? {};
  const app = express();
  app.set('x-powered-by', false);
  app.set('etag', false);
  if (logging)
    app.use(
      requestLog(
        createRequestRecorder({ ...logging, metrics: createMetrics({ queriesInFlight }), countedByClient: deprecatedOperations(spec) }),
      ),
    );
  app.use('/v1', async (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    const auth = authenticate(req.headers, req.rawHeaders);
    if (!auth.ok) return sendError(res, unauthorizedError(auth));
    res.locals.keyId = auth.key.keyId;
    res.locals.client = auth.key.client;
    res.locals.deadline = requestDeadline();
    if (rateLimiter) {
      const d = await rateLimiter.take(auth.key.clientId, res.locals.deadline as Deadline);
      res.set(rateLimitHeaders(d));
      if (!d.allowed) return sendError(res, rateLimited(d));
    }
    next();
  });
  const query = (req: express.Request) => new URLSearchParams(req.originalUrl.split('?', 2)[1] ?? '');
  app.get('/v1/pets', async (req, res) => {
    res.locals.operationId = 'listPets';
    const page = await listPage(pets, checkListQuery(query(req)), req.path);
    res.status(page.status).set(page.headers).json(page.body);
  });
  app.post('/v1/pets', async (req, res) => {
    res.locals.operationId = 'createPet';
    if (query(req).size > 0) throw new HttpError(400, 'validation_failed', 'createPet takes no query parameters');
    const body = await readJsonBody(req.headers, streamedBody(req), ['application/json']);
    res.status(201).json(await pets.create(checkNewPet(body?.value)));
  });
  app.get('/v1/pets/:petId', async (req, res) => {
    res.locals.operationId = 'getPet';
    res.set(deprecation);
    const id = checkPetId(String(req.params.petId));
    const pet = await pets.get(id);
    if (!pet) throw new HttpError(404, 'not_found', `No animal has id ${id}`);
    res.json(pet);
  });
  app.use('/v1', (req) => {
    const path = req.originalUrl.split('?')[0] ?? '/';
    route(req.method, path);
    throw new HttpError(404, 'not_found', `No route ${req.method} ${path}`);
  });
  app.use(errorMiddleware);
  return app;
}
