/**
 * The alternatives a user would pick instead of this product, for the benchmark: the same
 * contract, each on a store of its own as postgres.js documents it (plainStore.ts: a plain
 * `INSERT … RETURNING` per create, keyset `SELECT … ORDER BY id LIMIT` per page) and the same
 * bearer check (`createAuthenticator`), each library wired the way its documentation shows,
 * with no start-up or per-request tuning (fastify's is in fastify.ts):
 *
 * - `openapi-backend`: express 5, express.json(), and openapi-backend as published on npm
 *   (the `openapi-backend-published` alias: without this repository's patch), given the
 *   spec's file; `register` for the operations and its failure handlers,
 *   `registerSecurityHandler` for the key, `handleRequest` per request, `res.json` replies.
 * - `express-openapi-validator`: express 5, express.json(), the validator's middleware given
 *   the spec's file, express routes for the operations, an error handler, `res.json` replies.
 *
 * What neither library does and the contract asks for is written here in a line or two, as
 * a user would add it: the Error body, the key checked before a 404 or 405 under /v1, the
 * 415 for a body that is not JSON, and path and query integers written as plain decimal
 * digits (both libraries' ajv coercion would take `0x10` for 16). test/system/tools/bench.test.ts sends
 * the bench's requests and the failure paths to them and to the product and requires the
 * same statuses, codes, bodies and headers.
 */
import { readFileSync } from 'node:fs';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import OpenAPIBackend, { type Context } from 'openapi-backend-published';
import { parse } from 'yaml';
import type { components } from '../../generated/openapi';
import { type PlainStore, listPage } from './plainStore';
import { BODY_LIMIT_BYTES, bodyOf, createAuthenticator, HttpError, specPath, toHttpError, unauthorizedError } from './shared';

type PetStatus = components['schemas']['PetStatus'];

export interface AlternativeDeps {
  bootstrapKeys: readonly string[];
  pets: PlainStore;
  /** The Deprecation and Sunset headers getPet's replies carry (from the spec: src/contract/spec.ts). */
  getPetHeaders: Readonly<Record<string, string>>;
}

const API_ROOT = '/v1';
const DECIMAL = /^[0-9]+$/;
const bad = (message: string) => new HttpError(400, 'validation_failed', message);

/**
 * An integer parameter as the contract reads it: decimal digits only (what ajv's coercion would
 * also take, it does not). A number is one the library has already coerced from decimal text.
 */
function decimal(name: string, raw: unknown): number | undefined {
  if (raw === undefined || typeof raw === 'number') return raw;
  if (typeof raw !== 'string' || !DECIMAL.test(raw)) throw bad(`parameter '${name}' must be a decimal integer`);
  return Number(raw);
}

const hasBody = (req: express.Request) => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';

/** A body that is not JSON: the contract's 415 (openapi-backend does not check the media type of a body express.json() left alone). */
function requireJson(req: express.Request): void {
  if (hasBody(req) && !req.is('application/json'))
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Type must be application/json, got ${req.headers['content-type'] ?? 'none'}`,
    );
}

/** express.json()'s own failures, and anything else, as the contract's Error body. */
const errorHandler: express.ErrorRequestHandler = (err, _req, res, _next) => {
  const e = err as { type?: string };
  const failure =
    e.type === 'entity.parse.failed' ? new HttpError(400, 'malformed_json', 'The request body is not valid JSON') : toHttpError(err);
  res.status(failure.status).set(failure.headers).json(bodyOf(failure));
};

const jsonBody = express.json({ limit: BODY_LIMIT_BYTES, strict: false });

/** express 5 + openapi-backend, as its README shows: register, registerSecurityHandler, init, handleRequest. */
export async function createOpenApiBackendAlternative({ bootstrapKeys, pets, getPetHeaders }: AlternativeDeps): Promise<express.Express> {
  const authenticate = createAuthenticator({ bootstrapKeys, scopes: [] });
  // openapi-backend validates the document as OpenAPI 3.0, which refuses 3.1's `webhooks` (events this
  // service sends, no route): an app on it passes the document without them, as here.
  const { webhooks: _webhooks, ...routes } = parse(readFileSync(specPath, 'utf8')) as Record<string, unknown>;
  const api = new OpenAPIBackend({ definition: routes as never, apiRoot: API_ROOT, strict: true });
  const keyOf = (req: express.Request) => authenticate(req.headers, req.rawHeaders);
  const requireKey = (req: express.Request) => {
    const auth = keyOf(req);
    if (!auth.ok) throw unauthorizedError(auth);
  };
  api.register({
    listPets: async (c: Context, req: express.Request, res: express.Response) => {
      const q = c.request.query as Record<string, unknown>;
      const filter = {
        limit: decimal('limit', q.limit) ?? 20,
        status: q.status as PetStatus | undefined,
        cursor: q.cursor as string | undefined,
      };
      const page = await listPage(pets, filter, req.path);
      res.status(page.status).set(page.headers).json(page.body);
    },
    createPet: async (c: Context, _req: express.Request, res: express.Response) => {
      const body = c.request.requestBody as components['schemas']['NewPet'];
      res.status(201).json(await pets.create({ name: body.name, categoryId: body.categoryId, status: body.status ?? 'available' }));
    },
    getPet: async (c: Context, _req: express.Request, res: express.Response) => {
      res.set(getPetHeaders);
      const id = decimal('petId', (c.request.params as Record<string, unknown>).petId) as number;
      const pet = await pets.get(id);
      if (!pet) throw new HttpError(404, 'not_found', `No animal has id ${id}`);
      res.status(200).json(pet);
    },
    validationFail: (c: Context, _req: express.Request, res: express.Response) => {
      if (c.operation.deprecated) res.set(getPetHeaders);
      throw bad((c.validation.errors ?? []).map((e) => `${e.instancePath || 'request'} ${e.message ?? 'is invalid'}`).join('; '));
    },
    unauthorizedHandler: (_c: Context, req: express.Request) => requireKey(req),
    notFound: (_c: Context, req: express.Request) => {
      requireKey(req);
      throw new HttpError(404, 'not_found', `No route ${req.method} ${req.path}`);
    },
    methodNotAllowed: (_c: Context, req: express.Request) => {
      requireKey(req);
      const methods = ['get', 'post'].filter((method) => api.router.matchOperation({ method, path: req.path, headers: {} }));
      const allow = [...methods.flatMap((m) => (m === 'get' ? ['GET', 'HEAD'] : [m.toUpperCase()])), 'OPTIONS'].join(', ');
      throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here; allowed: ${allow}`, { Allow: allow });
    },
  });
  api.registerSecurityHandler('bearerAuth', (_c: Context, req: express.Request) => keyOf(req).ok);
  await api.init();

  const app = express();
  app.use(jsonBody);
  app.use(async (req, res, next) => {
    try {
      res.set('Cache-Control', 'no-store');
      if (req.method === 'POST') requireJson(req);
      await api.handleRequest(
        {
          method: req.method,
          path: req.path,
          query: req.query as Record<string, string>,
          headers: req.headers as Record<string, string>,
          body: req.body as unknown,
        },
        req,
        res,
      );
    } catch (err) {
      next(err);
    }
  });
  app.use(errorHandler);
  return app;
}

/** express 5 + express-openapi-validator, as its README shows: the middleware, express routes, an error handler. */
export function createExpressOpenApiValidatorAlternative({ bootstrapKeys, pets, getPetHeaders }: AlternativeDeps): express.Express {
  const authenticate = createAuthenticator({ bootstrapKeys, scopes: [] });
  const app = express();
  app.use(jsonBody);
  // The key before anything else under the API root, as the contract says (the validator would answer 404 and 405 first).
  app.use(API_ROOT, (req, res, next) => {
    res.set('Cache-Control', 'no-store');
    const auth = authenticate(req.headers, req.rawHeaders);
    if (!auth.ok) throw unauthorizedError(auth);
    if (req.method === 'POST') requireJson(req);
    next();
  });
  // getPet is deprecated: its Deprecation and Sunset headers go on every reply it gives, a 400 from the validator included.
  app.get(`${API_ROOT}/pets/:petId`, (_req, res, next) => {
    res.set(getPetHeaders);
    next();
  });
  app.use(
    OpenApiValidator.middleware({
      apiSpec: specPath,
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses: false,
      // The key was checked above, by the same check as the product's.
      validateSecurity: false,
    }),
  );
  app.get(`${API_ROOT}/pets`, async (req, res) => {
    const filter = {
      limit: decimal('limit', req.query.limit) ?? 20,
      status: req.query.status as PetStatus | undefined,
      cursor: req.query.cursor as string | undefined,
    };
    const page = await listPage(pets, filter, req.path);
    res.status(page.status).set(page.headers).json(page.body);
  });
  app.post(`${API_ROOT}/pets`, async (req, res) => {
    const body = req.body as components['schemas']['NewPet'];
    res.status(201).json(await pets.create({ name: body.name, categoryId: body.categoryId, status: body.status ?? 'available' }));
  });
  app.get(`${API_ROOT}/pets/:petId`, async (req, res) => {
    // The path's own text: the validator has coerced req.params (0x10 would be 16).
    const id = decimal('petId', decodeURIComponent(req.path.slice(`${API_ROOT}/pets/`.length).replace(/\/$/, ''))) as number;
    const pet = await pets.get(id);
    if (!pet) throw new HttpError(404, 'not_found', `No animal has id ${id}`);
    res.status(200).json(pet);
  });
  // The validator's errors (400, 404, 405, 413, 415) carry their status; its 405 lists nothing, so Allow is named here.
  app.use(((err, req, res, next) => {
    const e = err as { status?: number; message?: string; errors?: { path?: string; message?: string }[] };
    if (err instanceof HttpError || typeof e.status !== 'number' || (err as { type?: string }).type !== undefined) return next(err);
    const message = e.errors?.map((x) => `${x.path ?? ''} ${x.message ?? ''}`.trim()).join('; ') || (e.message ?? 'invalid request');
    const codes: Record<number, components['schemas']['Error']['code']> = {
      400: 'validation_failed',
      404: 'not_found',
      405: 'method_not_allowed',
      413: 'payload_too_large',
      415: 'unsupported_media_type',
    };
    // No body at all is the contract's 400 (the validator calls it a 415: no media type).
    if (e.status === 415 && !hasBody(req)) return next(bad('the request body is required'));
    const code = codes[e.status];
    if (!code) return next(err);
    const headers: Record<string, string> = {};
    if (e.status === 405)
      headers.Allow = req.path.replace(/\/+$/, '') === `${API_ROOT}/pets` ? 'GET, HEAD, POST, OPTIONS' : 'GET, HEAD, OPTIONS';
    next(new HttpError(e.status, code, message, headers));
  }) as express.ErrorRequestHandler);
  app.use(errorHandler);
  return app;
}
