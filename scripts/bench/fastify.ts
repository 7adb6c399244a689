/**
 * fastify 5 with route schemas, for the benchmark: the fastest mainstream choice a user would
 * weigh against this design. Wired as fastify's documentation shows: the contract's schemas
 * (taken from spec/openapi.yaml's components, as a user copying them would) on each route's
 * `querystring`, `params`, `body` and `response`, so that ajv validates requests and
 * fast-json-stringify writes replies; an `onRequest` hook for the bearer key (the product's
 * check, `createAuthenticator`), an error handler and a not-found handler for the Error body;
 * the store of plainStore.ts. No production features (log line, metrics, request id, rate
 * limiter, security headers, deadlines), as the bare express floor has none.
 *
 * Where fastify's defaults read the contract otherwise (ajv's coercion takes `0x10` for 16, an
 * unknown query parameter is ignored, a method not allowed is a 404), the bench's scenarios do
 * not go: test/system/tools/bench.test.ts requires the product's answers to the bench's own
 * requests and to the refusals they share.
 */
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { components } from '../../generated/openapi';
import { type PlainStore, listPage } from './plainStore';
import { BODY_LIMIT_BYTES, bodyOf, createAuthenticator, HttpError, type Spec, toHttpError, unauthorizedError } from './shared';

type NewPet = components['schemas']['NewPet'];
type PetStatus = components['schemas']['PetStatus'];

export interface FastifyDeps {
  spec: Spec;
  /** The spec's component schemas, dereferenced (openapi-backend's document: what a user would paste). */
  schemas: Record<string, object>;
  bootstrapKeys: readonly string[];
  pets: PlainStore;
}

export function createFastifyAlternative({ spec, schemas, bootstrapKeys, pets }: FastifyDeps): FastifyInstance {
  const authenticate = createAuthenticator({ bootstrapKeys, scopes: spec.scopes });
  const deprecation = spec.operations.get('getPet')?.deprecationHeaders ?? {};
  const { Pet, Pets, NewPet: newPet, Error: error, PetStatus: petStatus } = schemas;
  const app = Fastify({ bodyLimit: BODY_LIMIT_BYTES });
  app.addHook('onRequest', async (req, reply) => {
    reply.header('Cache-Control', 'no-store');
    const auth = authenticate(req.headers, req.raw.rawHeaders);
    if (!auth.ok) throw unauthorizedError(auth);
  });
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const failure = err.validation
      ? new HttpError(400, 'validation_failed', err.message)
      : err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? new HttpError(415, 'unsupported_media_type', err.message)
        : err.statusCode === 413
          ? new HttpError(413, 'payload_too_large', `The request body exceeds ${BODY_LIMIT_BYTES} bytes`)
          : err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
            ? new HttpError(400, 'malformed_json', 'The request body is not valid JSON')
            : toHttpError(err);
    void reply
      .status(failure.status)
      .headers(failure.headers ?? {})
      .send(bodyOf(failure));
  });
  app.setNotFoundHandler((req, reply) => {
    void reply.status(404).send(bodyOf(new HttpError(404, 'not_found', `No route ${req.method} ${req.url.split('?')[0]}`)));
  });
  const errors = { 400: error, 401: error, 404: error, 413: error, 415: error, 500: error };
  app.get(
    '/v1/pets',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
            status: petStatus,
            cursor: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
          },
        },
        response: { 200: Pets, ...errors },
      },
    },
    async (req, reply) => {
      const q = req.query as { limit: number; status?: PetStatus; cursor?: string };
      const page = await listPage(pets, q, req.url.split('?')[0] as string);
      return reply
        .status(page.status)
        .headers(page.headers ?? {})
        .send(page.body);
    },
  );
  app.post('/v1/pets', { schema: { body: newPet, response: { 201: Pet, ...errors } } }, async (req, reply) => {
    const { name, categoryId, status } = req.body as NewPet;
    return reply.status(201).send(await pets.create({ name, categoryId, status }));
  });
  app.get(
    '/v1/pets/:petId',
    {
      schema: {
        params: { type: 'object', properties: { petId: { type: 'integer', minimum: 1, maximum: 9007199254740991 } } },
        response: { 200: Pet, ...errors },
      },
      onRequest: async (_req, reply) => {
        reply.headers(deprecation);
      },
    },
    async (req, reply) => {
      const id = (req.params as { petId: number }).petId;
      const pet = await pets.get(id);
      if (!pet) throw new HttpError(404, 'not_found', `No animal has id ${id}`);
      return reply.send(pet);
    },
  );
  return app;
}
