/**
 * The spec diff over a corpus of edits of our own spec, as a team would make them: each
 * edit's rule id, level and the exit code `npm run spec:diff` would give (the same
 * function decides it).
 */
import path from 'node:path';
import { type Change, diffDocuments, failures, loadDocument } from '../../../scripts/spec-diff';
import { projectRoot } from '../../../src/paths';

type Json = Record<string, any>;
const TODAY = new Date('2026-11-23T12:00:00Z');

let spec: Json;
beforeAll(async () => {
  spec = await loadDocument(path.join(projectRoot, 'spec', 'openapi.yaml'));
});

// Our spec resolved: a component is one object wherever it is used, so editing it edits every use.
const S = (d: Json) => d.components.schemas;
const H = (d: Json) => d.components.headers;
const list = (d: Json) => d.paths['/pets'].get;
const create = (d: Json) => d.paths['/pets'].post;
const get = (d: Json) => d.paths['/pets/{petId}'].get;
const limit = (d: Json) => list(d).parameters[0];
const petExtra = (d: Json) => S(d).Pet.allOf[1];

type Edit = (d: Json) => void;
const corpus: [string, Edit, string, 0 | 1, { today?: string; failOn?: 'warning' }?][] = [
  ['limit maximum 100 → 50', (d) => (limit(d).schema.maximum = 50), 'request-maximum-lowered', 1],
  ['limit maximum 100 → 200', (d) => (limit(d).schema.maximum = 200), 'request-maximum-raised', 0],
  ['limit default 20 → 10', (d) => (limit(d).schema.default = 10), 'request-default-changed', 1],
  ['limit made exclusive at 1', (d) => (limit(d).schema.exclusiveMinimum = true), 'request-minimum-made-exclusive', 1],
  ['limit style form → spaceDelimited', (d) => (limit(d).style = 'spaceDelimited'), 'request-parameter-style-changed', 1],
  [
    'status sent as JSON (content)',
    (d) => (list(d).parameters[1] = { name: 'status', in: 'query', content: { 'application/json': { schema: S(d).PetStatus } } }),
    'request-parameter-serialisation-changed',
    1,
  ],
  ['a status value removed', (d) => S(d).PetStatus.enum.pop(), 'request-enum-value-removed', 1],
  [
    'a status value added: a response value clients may not know',
    (d) => S(d).PetStatus.enum.push('reserved'),
    'response-enum-value-added',
    0,
  ],
  ['the same, with --fail-on warning', (d) => S(d).PetStatus.enum.push('reserved'), 'response-enum-value-added', 1, { failOn: 'warning' }],
  ['name maxLength 200 → 100', (d) => (S(d).NewPet.properties.name.maxLength = 100), 'request-maxLength-lowered', 1],
  [
    'name maxLength removed: responses may now carry longer names',
    (d) => delete S(d).NewPet.properties.name.maxLength,
    'response-maxLength-removed',
    1,
  ],
  ['the int64 id maximum removed', (d) => delete petExtra(d).properties.id.maximum, 'response-maximum-removed', 1],
  ['name made nullable', (d) => (S(d).NewPet.properties.name.nullable = true), 'response-nullable-added', 1],
  ['categoryId made readOnly', (d) => (S(d).NewPet.properties.categoryId.readOnly = true), 'request-property-made-read-only', 1],
  [
    'a writeOnly property added to NewPet (never in responses)',
    (d) => (S(d).NewPet.properties.secret = { type: 'string', writeOnly: true }),
    'request-property-added',
    0,
  ],
  ['id made writeOnly', (d) => (petExtra(d).properties.id.writeOnly = true), 'response-property-made-write-only', 1],
  [
    'a required property added to NewPet',
    (d) => ((S(d).NewPet.properties.ownerId = { type: 'integer' }), S(d).NewPet.required.push('ownerId')),
    'request-required-property-added',
    1,
  ],
  ['an optional property added to NewPet', (d) => (S(d).NewPet.properties.nickname = { type: 'string' }), 'response-property-added', 0],
  [
    'Pet answered as one of Pet or a summary',
    (d) =>
      (create(d).responses['201'].content['application/json'].schema = {
        oneOf: [S(d).Pet, { type: 'object', title: 'PetSummary', properties: { id: { type: 'integer' } } }],
      }),
    'response-oneOf-branch-added',
    1,
  ],
  ['Pets maxItems 100 → 50', (d) => (S(d).Pets.maxItems = 50), 'response-maxItems-lowered', 0],
  ['Readiness.migration loses its maximum', (d) => delete S(d).Readiness.properties.migration.maximum, 'response-maximum-removed', 1],
  [
    'the optional RateLimit header removed',
    (d) => delete list(d).responses['200'].headers.RateLimit,
    'response-optional-header-removed',
    0,
  ],
  ['the Deprecation header made optional', (d) => (H(d).Deprecation.required = false), 'response-header-made-optional', 1],
  // As text on the wire, integer → string is wider: a client that parses seconds meets a date.
  ['Retry-After sent as an HTTP date (string)', (d) => (H(d)['Retry-After'].schema = { type: 'string' }), 'response-type-widened', 1],
  [
    'a response header added',
    (d) => (create(d).responses['201'].headers.Location = { schema: { type: 'string' } }),
    'response-header-added',
    0,
  ],
  ['Idempotency-Key made required', (d) => (create(d).parameters[0].required = true), 'request-parameter-made-required', 1],
  [
    'petId renamed to id',
    (d) => ((get(d).parameters[0].name = 'id'), (d.paths['/pets/{id}'] = d.paths['/pets/{petId}']), delete d.paths['/pets/{petId}']),
    'request-path-parameter-renamed',
    0,
  ],
  ['getPet removed before its sunset', (d) => delete d.paths['/pets/{petId}'], 'operation-removed-before-sunset', 1],
  ['getPet removed after its sunset', (d) => delete d.paths['/pets/{petId}'], 'operation-removed-after-sunset', 0, { today: '2030-12-06' }],
  ['getPet sunset moved earlier', (d) => (get(d)['x-sunset'] = '2029-12-05'), 'operation-sunset-moved-earlier', 1],
  [
    'listPets deprecated with 60 days to go',
    (d) => Object.assign(list(d), { deprecated: true, 'x-sunset': '2027-01-22' }),
    'operation-sunset-too-soon',
    1,
  ],
  [
    'listPets deprecated with two years to go',
    (d) => Object.assign(list(d), { deprecated: true, 'x-sunset': '2028-12-01' }),
    'operation-deprecated',
    0,
  ],
  ['listPets lowered to beta', (d) => (list(d)['x-stability-level'] = 'beta'), 'stability-level-decreased', 1],
  [
    'a property of NewPet deprecated without a sunset',
    (d) => (S(d).NewPet.properties.status.deprecated = true),
    'request-property-deprecated-without-sunset',
    0,
  ],
  [
    'createPet no longer takes JSON',
    (d) => (create(d).requestBody.content = { 'application/xml': create(d).requestBody.content['application/json'] }),
    'request-content-type-removed',
    1,
  ],
  [
    'createPet JSON gains an encoding',
    (d) => (create(d).requestBody.content['application/json'].encoding = { name: { contentType: 'text/plain' } }),
    'request-encoding-changed',
    1,
  ],
  ['createPet body made optional', (d) => (create(d).requestBody.required = false), 'request-body-made-optional', 0],
  [
    'createPet answers 200 instead of 201',
    (d) => ((create(d).responses['200'] = create(d).responses['201']), delete create(d).responses['201']),
    'success-response-status-changed',
    1,
  ],
  ['429 no longer documented on listPets', (d) => delete list(d).responses['429'], 'error-response-removed', 0],
  [
    'deletePet added',
    (d) => (d.paths['/pets/{petId}'].delete = { operationId: 'deletePet', responses: { '204': { description: 'Deleted.' } } }),
    'operation-added',
    0,
  ],
  [
    'the bearer scheme replaced by an API key header',
    (d) => (d.components.securitySchemes.bearerAuth = { type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    'security-requirement-changed',
    1,
  ],
  [
    'the base path moved to /v2',
    (d) => (d.servers = d.servers.map((s: Json) => ({ ...s, url: String(s.url).replace('/v1', '/v2') }))),
    'server-base-path-changed',
    1,
  ],
  ['a summary reworded', (d) => (list(d).summary = 'List the animals'), 'description-changed', 0],
];

describe('spec diff over edits of our own spec', () => {
  test.each(corpus.map(([name, edit, rule, exit, options]) => [name, rule, exit, edit, options] as const))(
    'when the edit is "%s", then the diff reports %s and exits %s',
    (_name, rule, exit, edit, options = {}) => {
      const edited = structuredClone(spec);
      edit(edited);
      const changes: Change[] = diffDocuments(structuredClone(spec), edited, {
        today: options.today ? new Date(`${options.today}T12:00:00Z`) : TODAY,
      });
      expect(changes.map((c) => c.rule)).toContain(rule);
      expect(failures(changes, options.failOn ?? 'error').length > 0 ? 1 : 0).toBe(exit);
    },
  );

  test('when our spec is compared with itself, then there are no changes', () => {
    expect(diffDocuments(structuredClone(spec), structuredClone(spec), { today: TODAY })).toEqual([]);
  });
});
