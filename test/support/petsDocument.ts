import { type Change, diffDocuments } from '../../scripts/spec-diff';

// The spec diff's test documents: a small document in the shape of ours, written out (no $refs)
// so each rule's edit is plain, and the changes found when a copy of it is edited.
export type Json = Record<string, any>;

export const pet = () => ({
  type: 'object',
  required: ['id', 'name', 'status'],
  properties: {
    id: { type: 'integer', format: 'int64' },
    name: { type: 'string', maxLength: 200 },
    status: { type: 'string', enum: ['available', 'pending', 'sold'] },
    tag: { type: 'string' },
  },
});
export const newPet = () => ({
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    categoryId: { type: 'integer', format: 'int64', minimum: 1 },
    status: { type: 'string', enum: ['available', 'pending', 'sold'], default: 'available' },
  },
});
export const base = (): Json => ({
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1.0.0', description: 'Pets.' },
  servers: [{ url: 'https://api.example/v1' }],
  security: [{ bearerAuth: [] }],
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' }, apiKey: { type: 'apiKey', in: 'header', name: 'X-Key' } },
  },
  paths: {
    '/pets': {
      get: {
        operationId: 'listPets',
        summary: 'List',
        parameters: [
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: ['available', 'pending', 'sold'] } },
        ],
        responses: {
          '200': { description: 'Pets', content: { 'application/json': { schema: { type: 'array', items: pet() } } } },
          '401': { description: 'No key' },
        },
      },
      post: {
        operationId: 'createPet',
        requestBody: { required: true, content: { 'application/json': { schema: newPet() } } },
        responses: {
          '201': {
            description: 'Created',
            headers: { Location: { schema: { type: 'string' } } },
            content: { 'application/json': { schema: pet() } },
          },
          '400': { description: 'Bad' },
        },
      },
    },
    '/pets/{petId}': {
      get: {
        operationId: 'getPet',
        deprecated: true,
        'x-sunset': '2030-12-05',
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
        responses: { '200': { description: 'Pet', content: { 'application/json': { schema: pet() } } }, '404': { description: 'None' } },
      },
    },
    '/orders': { get: { operationId: 'listOrders', responses: { '200': { description: 'Orders' } } } },
  },
});

export const TODAY = new Date('2026-11-22T12:00:00Z');
export const list = (d: Json) => d.paths['/pets'].get;
export const get = (d: Json) => d.paths['/pets/{petId}'].get;
export const petOut = (d: Json) => get(d).responses['200'].content['application/json'].schema;

/** The changes the spec diff finds between the document and a copy edited by `edit`. */
export function changesFor(edit: (d: Json) => void): Change[] {
  const edited = base();
  edit(edited);
  return diffDocuments(base(), edited, { today: TODAY });
}
