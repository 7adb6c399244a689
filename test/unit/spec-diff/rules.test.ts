/**
 * The spec diff, rule by rule: each rule of the table with a pair of small documents (both
 * directions for schema rules), stability levels, and a test that no rule is left without
 * a pair.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Change, diffDocuments, type Level, RULES } from '../../../scripts/spec-diff';
import { applyAccepted, readAccepted } from '../../../scripts/spec-diff/accepted';
import { RULES_PAGE, withRuleList } from '../../../scripts/spec-diff/rules-doc';
import { projectRoot } from '../../../src/paths';
import { NESTED_2020, SCHEMA_CASES_2020 } from '../../support/schemaCases2020';

type Json = Record<string, any>;
const TODAY = new Date('2026-11-23T12:00:00Z');
const day = (offset: number) => new Date(TODAY.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
const FAR = day(365);
const PAST = day(-10);

/**
 * A small document: POST /things takes `{x}` and answers `{x}` (the same shape in both
 * directions, so a schema edit can be made on one side only), GET /things lists them.
 */
const base = (): Json => ({
  openapi: '3.0.3',
  info: { title: 'Things', version: '1.0.0', description: 'Things.' },
  servers: [{ url: 'https://api.example/v1' }],
  security: [{ bearerAuth: [] }],
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' }, apiKey: { type: 'apiKey', in: 'header', name: 'X-Key' } },
  },
  paths: {
    '/things': {
      get: {
        operationId: 'listThings',
        summary: 'List',
        parameters: [
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'tags', in: 'query', required: false, schema: { type: 'array', items: { type: 'string' } } },
          { name: 'X-Trace', in: 'header', required: false, schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'Things',
            headers: {
              'X-Total': { required: true, schema: { type: 'integer', format: 'int32' } },
              'X-Hint': { schema: { type: 'string' } },
            },
            content: {
              'application/json': { schema: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } } } } },
            },
          },
          '401': { description: 'No key' },
        },
      },
      post: {
        operationId: 'createThing',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['x'], properties: { x: { type: 'string' }, y: { type: 'string' } } },
            },
          },
        },
        responses: {
          '201': {
            description: 'Created',
            content: {
              'application/json': {
                schema: { type: 'object', required: ['x'], properties: { x: { type: 'string' }, y: { type: 'string' } } },
              },
            },
          },
          '400': { description: 'Bad' },
        },
      },
    },
    '/things/{thingId}': {
      get: {
        operationId: 'getThing',
        parameters: [{ name: 'thingId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '200': { description: 'Thing' } },
      },
    },
  },
});

const list = (d: Json) => d.paths['/things'].get;
const create = (d: Json) => d.paths['/things'].post;
const reqBody = (d: Json) => create(d).requestBody.content['application/json'].schema;
const resBody = (d: Json) => create(d).responses['201'].content['application/json'].schema;
const side = { request: reqBody, response: resBody } as const;

type Edit = (d: Json) => void;
interface Case {
  rule: string;
  level: Level;
  what: string;
  old?: Edit;
  new: Edit;
  /** twin: the edit made to the small document, then compared as webhooks (asWebhooks); webhook: made to hookBase(). */
  mode?: 'twin' | 'webhook';
}
const cases: Case[] = [];
const add = (rule: string, level: Level, what: string, edit: Edit, old?: Edit) => cases.push({ rule, level, what, new: edit, old });

// ---------------------------------------------------------------- schema rules, in both directions
// [rule suffix, what, old schema of x, new schema of x, level in a request, level in a response]
const T: [Level, Level] = ['error', 'info']; // the allowed values shrank
const L: [Level, Level] = ['info', 'error']; // the allowed values grew: a response promises less
const I: [Level, Level] = ['error', 'error']; // neither
const schemaCases: [string, string, Json, Json, [Level, Level]][] = [
  ['type-widened', 'integer → number', { type: 'integer' }, { type: 'number' }, L],
  ['type-narrowed', 'number → integer', { type: 'number' }, { type: 'integer' }, T],
  ['type-changed', 'string → integer', { type: 'string' }, { type: 'integer' }, I],
  ['nullable-added', 'nullable: true (3.0)', { type: 'string' }, { type: 'string', nullable: true }, L],
  ['nullable-removed', 'nullable removed', { type: 'string', nullable: true }, { type: 'string' }, T],
  ['format-added', 'format added', { type: 'string' }, { type: 'string', format: 'date' }, T],
  ['format-removed', 'format removed', { type: 'string', format: 'date' }, { type: 'string' }, L],
  ['format-widened', 'int32 → int64', { type: 'integer', format: 'int32' }, { type: 'integer', format: 'int64' }, L],
  ['format-changed', 'date → uuid', { type: 'string', format: 'date' }, { type: 'string', format: 'uuid' }, I],
  ['minimum-added', 'minimum added', { type: 'integer' }, { type: 'integer', minimum: 1 }, T],
  ['minimum-removed', 'minimum removed', { type: 'integer', minimum: 1 }, { type: 'integer' }, L],
  ['minimum-raised', 'minimum 1 → 5', { type: 'integer', minimum: 1 }, { type: 'integer', minimum: 5 }, T],
  ['minimum-lowered', 'minimum 5 → 1', { type: 'integer', minimum: 5 }, { type: 'integer', minimum: 1 }, L],
  [
    'minimum-made-exclusive',
    'exclusiveMinimum: true (3.0)',
    { type: 'number', minimum: 0 },
    { type: 'number', minimum: 0, exclusiveMinimum: true },
    T,
  ],
  [
    'minimum-made-inclusive',
    'exclusiveMinimum: 0 (3.1) → minimum: 0',
    { type: 'number', exclusiveMinimum: 0 },
    { type: 'number', minimum: 0 },
    L,
  ],
  ['maximum-added', 'maximum added', { type: 'integer' }, { type: 'integer', maximum: 9 }, T],
  [
    'maximum-removed',
    'an int64 maximum removed',
    { type: 'integer', format: 'int64', maximum: 9 },
    { type: 'integer', format: 'int64' },
    L,
  ],
  ['maximum-lowered', 'maximum 9 → 5', { type: 'integer', maximum: 9 }, { type: 'integer', maximum: 5 }, T],
  ['maximum-raised', 'maximum 5 → 9', { type: 'integer', maximum: 5 }, { type: 'integer', maximum: 9 }, L],
  [
    'maximum-made-exclusive',
    'maximum: 9 → exclusiveMaximum: 9 (3.1)',
    { type: 'number', maximum: 9 },
    { type: 'number', exclusiveMaximum: 9 },
    T,
  ],
  [
    'maximum-made-inclusive',
    'exclusiveMaximum: true removed (3.0)',
    { type: 'number', maximum: 9, exclusiveMaximum: true },
    { type: 'number', maximum: 9 },
    L,
  ],
  ['multipleOf-added', 'multipleOf added', { type: 'integer' }, { type: 'integer', multipleOf: 2 }, T],
  ['multipleOf-removed', 'multipleOf removed', { type: 'integer', multipleOf: 2 }, { type: 'integer' }, L],
  ['multipleOf-raised', 'multipleOf 2 → 4', { type: 'integer', multipleOf: 2 }, { type: 'integer', multipleOf: 4 }, T],
  ['multipleOf-lowered', 'multipleOf 4 → 2', { type: 'integer', multipleOf: 4 }, { type: 'integer', multipleOf: 2 }, L],
  ['multipleOf-changed', 'multipleOf 2 → 3', { type: 'integer', multipleOf: 2 }, { type: 'integer', multipleOf: 3 }, I],
  ...(['minLength', 'minItems', 'minProperties'] as const).flatMap((k): [string, string, Json, Json, [Level, Level]][] => {
    const t = k === 'minLength' ? 'string' : k === 'minItems' ? 'array' : 'object';
    return [
      [`${k}-added`, `${k} added`, { type: t }, { type: t, [k]: 1 }, T],
      [`${k}-removed`, `${k} removed`, { type: t, [k]: 1 }, { type: t }, L],
      [`${k}-raised`, `${k} 1 → 2`, { type: t, [k]: 1 }, { type: t, [k]: 2 }, T],
      [`${k}-lowered`, `${k} 2 → 1`, { type: t, [k]: 2 }, { type: t, [k]: 1 }, L],
    ];
  }),
  ...(['maxLength', 'maxItems', 'maxProperties'] as const).flatMap((k): [string, string, Json, Json, [Level, Level]][] => {
    const t = k === 'maxLength' ? 'string' : k === 'maxItems' ? 'array' : 'object';
    return [
      [`${k}-added`, `${k} added`, { type: t }, { type: t, [k]: 10 }, T],
      [`${k}-removed`, `${k} removed`, { type: t, [k]: 10 }, { type: t }, L],
      [`${k}-lowered`, `${k} 10 → 5`, { type: t, [k]: 10 }, { type: t, [k]: 5 }, T],
      [`${k}-raised`, `${k} 5 → 10`, { type: t, [k]: 5 }, { type: t, [k]: 10 }, L],
    ];
  }),
  ['pattern-added', 'pattern added', { type: 'string' }, { type: 'string', pattern: '^a' }, T],
  ['pattern-removed', 'pattern removed', { type: 'string', pattern: '^a' }, { type: 'string' }, L],
  ['pattern-changed', 'pattern changed', { type: 'string', pattern: '^a' }, { type: 'string', pattern: '^b' }, ['warning', 'warning']],
  ['uniqueItems-added', 'uniqueItems added', { type: 'array' }, { type: 'array', uniqueItems: true }, T],
  ['uniqueItems-removed', 'uniqueItems removed', { type: 'array', uniqueItems: true }, { type: 'array' }, L],
  ['const-added', 'const added', { type: 'string' }, { type: 'string', const: 'a' }, T],
  ['const-removed', 'const removed', { type: 'string', const: 'a' }, { type: 'string' }, L],
  ['const-changed', 'const changed', { type: 'string', const: 'a' }, { type: 'string', const: 'b' }, I],
  ['enum-added', 'enum added', { type: 'string' }, { type: 'string', enum: ['a', 'b'] }, T],
  ['enum-removed', 'enum removed', { type: 'string', enum: ['a', 'b'] }, { type: 'string' }, L],
  ['enum-value-removed', 'enum value removed', { type: 'string', enum: ['a', 'b'] }, { type: 'string', enum: ['a'] }, T],
  ['enum-value-added', 'enum value added', { type: 'string', enum: ['a'] }, { type: 'string', enum: ['a', 'b'] }, ['info', 'warning']],
  ['additionalProperties-refused', 'additionalProperties: false', { type: 'object' }, { type: 'object', additionalProperties: false }, T],
  [
    'additionalProperties-allowed',
    'additionalProperties: false removed',
    { type: 'object', additionalProperties: false },
    { type: 'object' },
    ['info', 'warning'],
  ],
  [
    'additionalProperties-schema-added',
    'additionalProperties: a schema',
    { type: 'object' },
    { type: 'object', additionalProperties: { type: 'string' } },
    T,
  ],
  [
    'additionalProperties-schema-removed',
    'additionalProperties schema removed',
    { type: 'object', additionalProperties: { type: 'string' } },
    { type: 'object' },
    ['info', 'warning'],
  ],
  // JSON Schema 2020-12 (OpenAPI 3.1): test/support/schemaCases2020.ts
  ...SCHEMA_CASES_2020,
  ['default-added', 'default added', { type: 'string' }, { type: 'string', default: 'a' }, ['warning', 'info']],
  ['default-removed', 'default removed', { type: 'string', default: 'a' }, { type: 'string' }, ['error', 'info']],
  ['default-changed', 'default changed', { type: 'string', default: 'a' }, { type: 'string', default: 'b' }, ['error', 'info']],
  // composition, branch by branch
  [
    'oneOf-branch-added',
    'a oneOf branch added',
    { oneOf: [{ type: 'string' }] },
    { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    ['info', 'error'],
  ],
  [
    'oneOf-branch-removed',
    'a oneOf branch removed',
    { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    { oneOf: [{ type: 'string' }] },
    ['error', 'info'],
  ],
  [
    'anyOf-branch-added',
    'a type wrapped in anyOf with a new branch',
    { type: 'string' },
    { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    ['info', 'error'],
  ],
  [
    'anyOf-branch-removed',
    'anyOf unwrapped to one of its branches',
    { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    { type: 'string' },
    ['error', 'info'],
  ],
  ['not-changed', '`not` changed', { not: { type: 'string' } }, { not: { type: 'integer' } }, I],
  ...((): [string, string, Json, Json, [Level, Level]][] => {
    const cat = { title: 'Cat', type: 'object', properties: { kind: { type: 'string', enum: ['cat'] } } };
    const dog = { title: 'Dog', type: 'object', properties: { kind: { type: 'string', enum: ['dog'] } } };
    const poly = (disc: Json | undefined) => ({ oneOf: [cat, dog], ...(disc ? { discriminator: disc } : {}) });
    const d = (mapping: Json) => ({ propertyName: 'kind', mapping });
    return [
      ['discriminator-added', 'a discriminator added', poly(undefined), poly({ propertyName: 'kind' }), ['warning', 'warning']],
      ['discriminator-removed', 'a discriminator removed', poly({ propertyName: 'kind' }), poly(undefined), ['warning', 'warning']],
      ['discriminator-property-changed', 'its propertyName changed', poly({ propertyName: 'kind' }), poly({ propertyName: 'type' }), I],
      [
        'discriminator-mapping-added',
        'a mapping value added',
        poly(d({ cat: '#/c' })),
        poly(d({ cat: '#/c', dog: '#/d' })),
        ['info', 'error'],
      ],
      [
        'discriminator-mapping-removed',
        'a mapping value removed',
        poly(d({ cat: '#/c', dog: '#/d' })),
        poly(d({ cat: '#/c' })),
        ['error', 'info'],
      ],
      ['discriminator-mapping-changed', 'a mapping value re-pointed', poly(d({ cat: '#/c' })), poly(d({ cat: '#/d' })), I],
    ];
  })(),
];
for (const [suffix, what, o, n, [reqLevel, resLevel]] of schemaCases) {
  for (const [dir, level] of [
    ['request', reqLevel],
    ['response', resLevel],
  ] as const) {
    add(
      `${dir}-${suffix}`,
      level,
      `${what} (${dir})`,
      (d) => (side[dir](d).properties.x = structuredClone(n)),
      (d) => (side[dir](d).properties.x = structuredClone(o)),
    );
  }
}

// ---------------------------------------------------------------- properties, readOnly / writeOnly
add('request-property-removed', 'error', 'a request property removed', (d) => delete reqBody(d).properties.y);
add('request-property-added', 'info', 'an optional request property added', (d) => (reqBody(d).properties.z = { type: 'string' }));
add('request-required-property-added', 'error', 'a required request property added', (d) => {
  reqBody(d).properties.z = { type: 'string' };
  reqBody(d).required.push('z');
});
add('request-property-made-required', 'error', 'a request property made required', (d) => reqBody(d).required.push('y'));
add('request-property-made-optional', 'info', 'a request property made optional', (d) => (reqBody(d).required = []));
add('response-property-removed', 'error', 'a response property removed', (d) => delete resBody(d).properties.y);
add('response-property-added', 'info', 'a response property added', (d) => (resBody(d).properties.z = { type: 'string' }));
add('response-property-made-optional', 'error', 'a response property made optional', (d) => (resBody(d).required = []));
add('response-property-made-required', 'info', 'a response property made required', (d) => resBody(d).required.push('y'));
add('request-property-made-read-only', 'error', 'a request property made readOnly', (d) => (reqBody(d).properties.y.readOnly = true));
add(
  'request-property-read-only-removed',
  'info',
  'readOnly removed from a request property',
  (d) => delete reqBody(d).properties.y.readOnly,
  (d) => (reqBody(d).properties.y.readOnly = true),
);
add('response-property-made-write-only', 'error', 'a response property made writeOnly', (d) => (resBody(d).properties.y.writeOnly = true));
add(
  'response-property-write-only-removed',
  'info',
  'writeOnly removed from a response property',
  (d) => delete resBody(d).properties.y.writeOnly,
  (d) => (resBody(d).properties.y.writeOnly = true),
);

// ---------------------------------------------------------------- operations and security
add(
  'operation-added',
  'info',
  'an operation added',
  (d) => (d.paths['/things/{thingId}'].delete = { operationId: 'deleteThing', responses: { '204': { description: 'Gone' } } }),
);
add('operation-removed', 'error', 'an operation removed', (d) => delete d.paths['/things/{thingId}']);
add('operation-id-changed', 'error', 'an operationId changed', (d) => (list(d).operationId = 'findThings'));
add('server-base-path-changed', 'error', 'the base path changed', (d) => (d.servers = [{ url: 'https://api.example/v2' }]));
add(
  'security-requirement-added',
  'error',
  'credentials now needed',
  (d) => delete list(d).security,
  (d) => (list(d).security = []),
);
add(
  'security-requirement-changed',
  'error',
  'a scheme changed',
  (d) => (d.components.securitySchemes.bearerAuth = { type: 'apiKey', in: 'header', name: 'Authorization' }),
);
add('security-requirement-loosened', 'info', 'a second way to authenticate', (d) => (d.security = [{ bearerAuth: [] }, { apiKey: [] }]));
add('security-roles-stated', 'info', 'role names on the bearer scheme, moving from OpenAPI 3.0 to 3.1', (d) => {
  d.openapi = '3.1.0';
  list(d).security = [{ bearerAuth: ['things:read'] }];
});
add('description-changed', 'info', 'a summary changed', (d) => (list(d).summary = 'List the things'));

// ---------------------------------------------------------------- parameters and their serialisation
const limit = (d: Json) => list(d).parameters[0];
const tags = (d: Json) => list(d).parameters[1];
add('request-parameter-removed', 'error', 'a parameter removed', (d) => list(d).parameters.splice(0, 1));
add('request-required-parameter-added', 'error', 'a required parameter added', (d) =>
  list(d).parameters.push({ name: 'owner', in: 'query', required: true, schema: { type: 'string' } }),
);
add('request-optional-parameter-added', 'info', 'an optional parameter added', (d) =>
  list(d).parameters.push({ name: 'owner', in: 'query', schema: { type: 'string' } }),
);
add('request-parameter-made-required', 'error', 'a parameter made required', (d) => (limit(d).required = true));
add(
  'request-parameter-made-optional',
  'info',
  'a parameter made optional',
  (d) => (limit(d).required = false),
  (d) => (limit(d).required = true),
);
add('request-path-parameter-renamed', 'warning', 'a path parameter renamed (no URL changes)', (d) => {
  const item = d.paths['/things/{thingId}'];
  item.get.parameters[0].name = 'id';
  d.paths['/things/{id}'] = item;
  delete d.paths['/things/{thingId}'];
});
add('request-parameter-style-changed', 'error', 'style form → pipeDelimited', (d) => (tags(d).style = 'pipeDelimited'));
add(
  'request-parameter-explode-changed',
  'error',
  'explode true → false (tags=a,b instead of tags=a&tags=b)',
  (d) => (tags(d).explode = false),
);
add(
  'request-parameter-allow-reserved-removed',
  'error',
  'allowReserved removed',
  (d) => delete tags(d).allowReserved,
  (d) => (tags(d).allowReserved = true),
);
add('request-parameter-allow-reserved-added', 'info', 'allowReserved added', (d) => (tags(d).allowReserved = true));
add('request-parameter-serialisation-changed', 'error', 'schema → content (JSON in the query)', (d) => {
  tags(d).content = { 'application/json': { schema: tags(d).schema } };
  delete tags(d).schema;
});

// ---------------------------------------------------------------- bodies and media types
add('request-body-removed', 'error', 'the request body removed', (d) => delete create(d).requestBody);
add(
  'request-body-added-required',
  'error',
  'a required body added',
  (d) => (list(d).requestBody = { required: true, content: { 'application/json': { schema: { type: 'object' } } } }),
);
add(
  'request-body-added-optional',
  'info',
  'an optional body added',
  (d) => (list(d).requestBody = { content: { 'application/json': { schema: { type: 'object' } } } }),
);
add(
  'request-body-made-required',
  'error',
  'the body made required',
  (d) => (create(d).requestBody.required = true),
  (d) => (create(d).requestBody.required = false),
);
add('request-body-made-optional', 'info', 'the body made optional', (d) => (create(d).requestBody.required = false));
const renameType = (content: Json, to: string) => {
  content[to] = content['application/json'];
  delete content['application/json'];
};
add('request-content-type-removed', 'error', 'application/json no longer accepted', (d) =>
  renameType(create(d).requestBody.content, 'application/xml'),
);
add(
  'request-content-type-added',
  'info',
  'a request media type added',
  (d) => (create(d).requestBody.content['application/xml'] = { schema: { type: 'object' } }),
);
add('response-content-type-removed', 'error', 'a response media type removed', (d) =>
  renameType(create(d).responses['201'].content, 'application/xml'),
);
add(
  'response-content-type-added',
  'info',
  'a response media type added',
  (d) => (create(d).responses['201'].content['application/xml'] = { schema: { type: 'object' } }),
);
for (const dir of ['request', 'response'] as const) {
  const media = (d: Json) =>
    dir === 'request' ? create(d).requestBody.content['application/json'] : create(d).responses['201'].content['application/json'];
  add(
    `${dir}-media-type-schema-added`,
    dir === 'request' ? 'error' : 'info',
    `a ${dir} schema added`,
    (d) => (media(d).schema = { type: 'object' }),
    (d) => delete media(d).schema,
  );
  add(`${dir}-media-type-schema-removed`, dir === 'request' ? 'info' : 'error', `a ${dir} schema removed`, (d) => delete media(d).schema);
  add(`${dir}-encoding-changed`, 'error', `a ${dir} encoding changed`, (d) => (media(d).encoding = { x: { contentType: 'text/plain' } }));
}

// ---------------------------------------------------------------- responses and their headers
const ok = (d: Json) => list(d).responses['200'];
add('success-response-removed', 'error', 'a success response removed', (d) => delete d.paths['/things/{thingId}'].get.responses['200']);
add('success-response-status-changed', 'error', '201 → 200', (d) => {
  create(d).responses['200'] = create(d).responses['201'];
  delete create(d).responses['201'];
});
add('error-response-removed', 'info', 'an error response removed', (d) => delete list(d).responses['401']);
add('response-added', 'info', 'a response added', (d) => (list(d).responses['503'] = { description: 'Down' }));
add('response-required-header-removed', 'error', 'a required header removed', (d) => delete ok(d).headers['X-Total']);
add('response-optional-header-removed', 'warning', 'an optional header removed', (d) => delete ok(d).headers['X-Hint']);
add('response-header-made-optional', 'error', 'a header made optional', (d) => (ok(d).headers['X-Total'].required = false));
add('response-header-made-required', 'info', 'a header made required', (d) => (ok(d).headers['X-Hint'].required = true));
add('response-header-added', 'info', 'a header added', (d) => (ok(d).headers['X-Next'] = { schema: { type: 'string' } }));

// ---------------------------------------------------------------- deprecation and sunset, for each subject
const subjects: Subject[] = [
  ['operation', (d) => d.paths['/things/{thingId}'].get, (d) => delete d.paths['/things/{thingId}']],
  ['request-parameter', (d) => limit(d), (d) => list(d).parameters.splice(0, 1)],
  ['request-property', (d) => reqBody(d).properties.y, (d) => delete reqBody(d).properties.y],
  ['response-property', (d) => resBody(d).properties.y, (d) => delete resBody(d).properties.y],
];
/** The ten deprecation and sunset rules of each subject: what it is in a document, and how it is removed. */
type Subject = [string, (d: Json) => Json, (d: Json) => void];
function addDeprecationCases(subjects: Subject[], push: typeof add): void {
  for (const [s, of, remove] of subjects) {
    const set = (fields: Json) => (d: Json) => Object.assign(of(d), fields);
    push(`${s}-deprecated`, 'info', `${s} deprecated with a sunset a year ahead`, set({ deprecated: true, 'x-sunset': FAR }));
    push(`${s}-deprecated-without-sunset`, 'warning', `${s} deprecated without a sunset`, set({ deprecated: true }));
    push(`${s}-sunset-too-soon`, 'error', `${s} deprecated with a sunset 30 days ahead`, set({ deprecated: true, 'x-sunset': day(30) }));
    push(`${s}-undeprecated`, 'info', `${s} no longer deprecated`, set({ deprecated: false }), set({ deprecated: true }));
    push(`${s}-sunset-added`, 'info', `${s} given a sunset`, set({ 'x-sunset': FAR }));
    push(`${s}-sunset-removed`, 'info', `${s}'s sunset withdrawn`, (d) => delete of(d)['x-sunset'], set({ 'x-sunset': FAR }));
    push(
      `${s}-sunset-moved-earlier`,
      'error',
      `${s}'s sunset moved earlier`,
      set({ deprecated: true, 'x-sunset': day(300) }),
      set({ deprecated: true, 'x-sunset': FAR }),
    );
    push(
      `${s}-sunset-moved-later`,
      'info',
      `${s}'s sunset moved later`,
      set({ deprecated: true, 'x-sunset': day(400) }),
      set({ deprecated: true, 'x-sunset': FAR }),
    );
    push(`${s}-removed-before-sunset`, 'error', `${s} removed before its sunset`, remove, set({ deprecated: true, 'x-sunset': FAR }));
    push(`${s}-removed-after-sunset`, 'info', `${s} removed after its sunset`, remove, set({ deprecated: true, 'x-sunset': PAST }));
  }
}
addDeprecationCases(subjects, add);

// ---------------------------------------------------------------- stability levels
add('stability-level-decreased', 'error', 'stable → beta', (d) => (list(d)['x-stability-level'] = 'beta'));
add(
  'stability-level-increased',
  'info',
  'beta → stable',
  (d) => (list(d)['x-stability-level'] = 'stable'),
  (d) => (list(d)['x-stability-level'] = 'beta'),
);

add('request-oneOf-branches-overlap', 'error', 'a body wrapped in oneOf with a branch its requests also match', (d) => {
  const body = create(d).requestBody.content['application/json'];
  body.schema = { oneOf: [body.schema, { type: 'object', properties: { z: { type: 'string' } } }] };
});
add('stability-level-invalid', 'error', 'x-stability-level: alfa (a typo)', (d) => (list(d)['x-stability-level'] = 'alfa'));
add('sunset-invalid', 'error', 'an x-sunset that is no date', (d) =>
  Object.assign(list(d), { deprecated: true, 'x-sunset': '2030-02-30' }),
);

// ---------------------------------------------------------------- webhooks (3.1): the same shapes, the other way round
/**
 * The small document's POST /things as a webhook the API calls: its payload is what createThing
 * answered (a response's shape), its reply what createThing took (a request's shape).
 */
const asWebhooks = (d: Json): Json => ({
  ...d,
  openapi: '3.1.0',
  paths: {},
  webhooks: {
    thingCreated: {
      post: {
        operationId: 'thingCreated',
        requestBody: { required: true, content: create(d).responses['201'].content },
        responses: { '200': { description: 'Received', content: create(d).requestBody.content } },
      },
    },
  },
});
const hook = (d: Json) => d.webhooks.thingCreated.post;
const hookBase = (): Json => {
  const d = asWebhooks(base());
  hook(d).parameters = [
    { name: 'X-Signature', in: 'header', required: true, schema: { type: 'string' } },
    { name: 'X-Attempt', in: 'header', schema: { type: 'integer' } },
  ];
  hook(d).responses['410'] = {
    description: 'Unsubscribe',
    headers: { 'X-Reason': { schema: { type: 'string' } }, 'X-Id': { required: true, schema: { type: 'string' } } },
  };
  return d;
};
// Each schema rule's pair, made again on the webhook: reported as its twin, at the same level.
for (const c of [...cases]) {
  const twin = [...RULES.values()].find((r) => r.twinOf === c.rule);
  if (twin) cases.push({ ...c, rule: twin.id, what: `${c.what}, in a webhook`, mode: 'twin' });
}
const addHook = (rule: string, level: Level, what: string, edit: Edit, old?: Edit) =>
  cases.push({ rule, level, what, new: edit, old, mode: 'webhook' });
const payload = (d: Json) => hook(d).requestBody;
const signature = (d: Json) => hook(d).parameters[0];
const attempt = (d: Json) => hook(d).parameters[1];
const gone = (d: Json) => hook(d).responses['410'];
addHook(
  'webhook-added',
  'info',
  'a webhook added',
  (d) => (d.webhooks.thingDeleted = { post: { responses: { '200': { description: 'Received' } } } }),
);
addHook('webhook-removed', 'error', 'a webhook removed', (d) => delete d.webhooks.thingCreated);
addHook('webhook-operation-id-changed', 'error', "a webhook's operationId changed", (d) => (hook(d).operationId = 'onThingCreated'));
addHook('webhook-security-changed', 'error', 'the API signs with another scheme', (d) => (hook(d).security = [{ apiKey: [] }]));
addHook(
  'webhook-security-narrowed',
  'info',
  'the API presents one of the two ways it listed',
  (d) => (hook(d).security = [{ bearerAuth: [] }]),
  (d) => (hook(d).security = [{ bearerAuth: [] }, { apiKey: [] }]),
);
addHook('webhook-payload-required-parameter-removed', 'error', 'a header always sent no longer sent', (d) =>
  hook(d).parameters.splice(0, 1),
);
addHook('webhook-payload-optional-parameter-removed', 'warning', 'a header sometimes sent no longer sent', (d) =>
  hook(d).parameters.splice(1, 1),
);
addHook('webhook-payload-parameter-added', 'info', 'a header added to what is sent', (d) =>
  hook(d).parameters.push({ name: 'X-Event', in: 'header', schema: { type: 'string' } }),
);
addHook('webhook-payload-parameter-made-optional', 'error', 'a header no longer always sent', (d) => (signature(d).required = false));
addHook('webhook-payload-parameter-made-required', 'info', 'a header now always sent', (d) => (attempt(d).required = true));
addHook('webhook-payload-parameter-serialisation-changed', 'error', 'a header moved from schema to content', (d) => {
  attempt(d).content = { 'application/json': { schema: attempt(d).schema } };
  delete attempt(d).schema;
});
addHook('webhook-payload-body-removed', 'error', 'the body no longer sent', (d) => delete hook(d).requestBody);
addHook(
  'webhook-payload-body-added',
  'info',
  'a body sent',
  (d) => (hook(d).requestBody = payload(hookBase())),
  (d) => delete hook(d).requestBody,
);
addHook('webhook-payload-body-made-optional', 'error', 'the body may be left out', (d) => (payload(d).required = false));
addHook(
  'webhook-payload-body-made-required',
  'info',
  'the body always sent',
  (d) => (payload(d).required = true),
  (d) => (payload(d).required = false),
);
addHook(
  'webhook-payload-content-type-added',
  'error',
  'the body may come as XML',
  (d) => (payload(d).content['application/xml'] = { schema: { type: 'object' } }),
);
addHook(
  'webhook-payload-content-type-removed',
  'info',
  'the body no longer comes as XML',
  (d) => delete payload(d).content['application/xml'],
  (d) => (payload(d).content['application/xml'] = { schema: { type: 'object' } }),
);
addHook('webhook-reply-status-removed', 'error', 'a reply of 410 no longer understood', (d) => delete hook(d).responses['410']);
addHook('webhook-reply-status-added', 'info', 'a reply of 202 understood', (d) => (hook(d).responses['202'] = { description: 'Queued' }));
addHook('webhook-reply-content-type-removed', 'error', 'a reply as JSON no longer accepted', (d) =>
  renameType(hook(d).responses['200'].content, 'application/xml'),
);
addHook(
  'webhook-reply-content-type-added',
  'info',
  'a reply as XML accepted',
  (d) => (hook(d).responses['200'].content['text/plain'] = {}),
);
addHook('webhook-reply-header-removed', 'info', 'a reply header no longer read', (d) => delete gone(d).headers['X-Reason']);
addHook('webhook-reply-required-header-added', 'error', 'replies must carry a new header', (d) =>
  Object.assign(gone(d).headers, { 'X-Until': { required: true, schema: { type: 'string' } } }),
);
addHook('webhook-reply-optional-header-added', 'info', 'replies may carry a new header', (d) =>
  Object.assign(gone(d).headers, { 'X-Until': { schema: { type: 'string' } } }),
);
addHook(
  'webhook-reply-header-made-required',
  'error',
  'a reply header made required',
  (d) => (gone(d).headers['X-Reason'].required = true),
);
addHook('webhook-reply-header-made-optional', 'info', 'a reply header made optional', (d) => (gone(d).headers['X-Id'].required = false));
addDeprecationCases(
  [
    ['webhook', hook, (d) => delete d.webhooks.thingCreated],
    ['webhook-payload-parameter', attempt, (d) => hook(d).parameters.splice(1, 1)],
  ],
  addHook,
);

function diff(oldEdit: Edit | undefined, newEdit: Edit, options: { deprecationDays?: number; mode?: Case['mode'] } = {}): Change[] {
  const o = options.mode === 'webhook' ? hookBase() : base();
  oldEdit?.(o);
  const n = structuredClone(o);
  newEdit(n);
  const [a, b] = options.mode === 'twin' ? [asWebhooks(o), asWebhooks(n)] : [o, n];
  return diffDocuments(a, b, { today: TODAY, deprecationDays: options.deprecationDays });
}

describe('spec diff rules: a pair of small documents for each', () => {
  test.each(cases.map((c) => [`${c.rule} (${c.level}): ${c.what}`, c] as const))(
    'when the edit is %s, then that rule is reported at that level',
    (_name, c) => {
      const changes = diff(c.old, c.new, { mode: c.mode });
      expect(changes).toContainEqual(expect.objectContaining({ rule: c.rule, level: c.level }));
      // Nothing more severe than the rule itself comes with it.
      const rank = (l: Level) => ['error', 'warning', 'info'].indexOf(l);
      expect(changes.filter((x) => rank(x.level) < rank(c.level))).toEqual([]);
    },
  );

  test('when the rule table is listed, then every rule has a pair of documents above', () => {
    const covered = new Set(cases.map((c) => c.rule));
    expect([...RULES.keys()].filter((id) => !covered.has(id))).toEqual([]);
  });

  test("when docs/spec-diff.md's rule list is compared with the rule table, then they are the same (npm run docs:rules rewrites it)", () => {
    const page = readFileSync(path.join(projectRoot, RULES_PAGE), 'utf8');
    expect(page).toBe(withRuleList(page));
    for (const id of RULES.keys()) expect(page).toContain(`\`${id}\``);
  });

  test('when a pair says a rule has a level, then the rule table agrees', () => {
    expect(cases.filter((c) => RULES.get(c.rule)?.level !== c.level).map((c) => c.rule)).toEqual([]);
  });
});

describe('spec diff: a change nested under a JSON Schema 2020-12 keyword is found as under properties', () => {
  test.each(
    NESTED_2020.flatMap(([what, o, n, rule, end]) =>
      (['request', 'response'] as const).map((dir) => [`${what} (${dir})`, dir, o, n, rule, end] as const),
    ),
  )('when %s, then its rule points at it', (_what, dir, o, n, rule, end) => {
    const changes = diff(
      (d) => (side[dir](d).properties.x = structuredClone(o)),
      (d) => (side[dir](d).properties.x = structuredClone(n)),
    );
    const found = changes.filter((c) => c.rule === `${dir}-${rule}`).map((c) => c.pointer);
    expect(found.map((pointer) => pointer.slice(pointer.indexOf('/properties/x/')))).toContain(`/properties/x${end}`);
  });
});

describe('spec diff: schema forms that mean the same, and what is not a change', () => {
  test.each([
    [
      '3.0 exclusiveMinimum: true and 3.1 exclusiveMinimum: 0',
      { type: 'number', minimum: 0, exclusiveMinimum: true },
      { type: 'number', exclusiveMinimum: 0 },
    ],
    ['3.0 nullable: true and 3.1 type: [string, null]', { type: 'string', nullable: true }, { type: ['string', 'null'] }],
    ['a query parameter with its default style written out', null, null],
    [
      'properties in another order',
      { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } } },
      { type: 'object', properties: { b: { type: 'integer' }, a: { type: 'string' } } },
    ],
    [
      'oneOf branches in another order',
      { oneOf: [{ type: 'string' }, { type: 'integer' }] },
      { oneOf: [{ type: 'integer' }, { type: 'string' }] },
    ],
  ])('when the documents differ only by %s, then nothing is reported', (name, o, n) => {
    if (o === null) {
      expect(diff(undefined, (d) => Object.assign(tags(d), { style: 'form', explode: true, allowReserved: false }))).toEqual([]);
      return;
    }
    for (const dir of ['request', 'response'] as const)
      expect(
        diff(
          (d) => (side[dir](d).properties.x = structuredClone(o)),
          (d) => (side[dir](d).properties.x = structuredClone(n)),
        ),
      ).toEqual([]);
  });

  test('when a property already in one allOf branch is declared again in another, then nothing is reported: both schemas still apply', () => {
    const created = (d: Json) => d.paths['/things'].post.responses['201'].content['application/json'];
    const inTwoBranches = (d: Json) => {
      const body = resBody(d);
      body.properties.x = { type: 'string', enum: ['a', 'b'], default: 'a' };
      created(d).schema = { allOf: [body, { type: 'object', required: ['x'], properties: {} }] };
    };
    // Pet's `status`: a default in NewPet's branch, declared again (no default) where Pet makes it required.
    expect(diff(inTwoBranches, (d) => (created(d).schema.allOf[1].properties.x = { type: 'string', enum: ['a', 'b'] }))).toEqual([]);
  });

  test('when a readOnly property is added to a request as required, then nothing is reported: requests never send it', () => {
    expect(
      diff(undefined, (d) => {
        reqBody(d).properties.id = { type: 'integer', readOnly: true };
        reqBody(d).required.push('id');
      }),
    ).toEqual([]);
  });

  test('when a writeOnly property is removed from a response, then nothing is reported: responses never carried it', () => {
    expect(
      diff(
        (d) => (resBody(d).properties.secret = { type: 'string', writeOnly: true }),
        (d) => delete resBody(d).properties.secret,
      ),
    ).toEqual([]);
  });

  test('when a response header changes type or becomes nullable, then it is graded as a response schema at the header', () => {
    const changes = diff(undefined, (d) => {
      ok(d).headers['X-Total'].schema = { type: 'string', nullable: true };
    });
    expect(changes).toEqual(
      expect.arrayContaining([
        // integer → string: as text on the wire, any text may now come.
        expect.objectContaining({
          rule: 'response-type-widened',
          level: 'error',
          pointer: '/paths/~1things/get/responses/200/headers/X-Total/schema/type',
        }),
        expect.objectContaining({ rule: 'response-nullable-added', level: 'error' }),
      ]),
    );
  });

  test('when a oneOf branch changes inside, then the branches are paired and the change is reported inside the branch', () => {
    const cat = (kind: Json): Json => ({ title: 'Cat', type: 'object', properties: { kind, lives: { type: 'integer', maximum: 9 } } });
    const changes = diff(
      (d) => (resBody(d).properties.x = { oneOf: [{ type: 'string' }, cat({ type: 'string' })] }),
      (d) => (resBody(d).properties.x = { oneOf: [cat({ type: 'string' }), { type: 'string' }] }),
    );
    expect(changes).toEqual([]);
    const widened = diff(
      (d) => (resBody(d).properties.x = { oneOf: [{ type: 'string' }, cat({ type: 'string' })] }),
      (d) => {
        const c = cat({ type: 'string' });
        delete c.properties.lives.maximum;
        resBody(d).properties.x = { oneOf: [{ type: 'string' }, c] };
      },
    );
    expect(widened).toEqual([
      expect.objectContaining({
        rule: 'response-maximum-removed',
        pointer: '/paths/~1things/post/responses/201/content/application~1json/schema/properties/x/oneOf/1/properties/lives/maximum',
      }),
    ]);
  });
});

describe('spec diff: stability levels soften what breaks an operation', () => {
  const breakList = (d: Json) => (limit(d).schema.maximum = 50);
  test.each([
    ['stable (no marker)', undefined, 'error'],
    ['beta', 'beta', 'warning'],
    ['experimental', 'experimental', 'info'],
  ] as const)('when a %s operation loses a request bound, then the finding is %s', (_name, level, expected) => {
    const changes = diff((d) => level && (list(d)['x-stability-level'] = level), breakList);
    expect(changes).toEqual([
      expect.objectContaining({ rule: 'request-maximum-lowered', level: expected, ...(level ? { stability: level } : {}) }),
    ]);
  });

  test('when an experimental operation is removed, then it is info', () => {
    const changes = diff(
      (d) => (d.paths['/things/{thingId}'].get['x-stability-level'] = 'experimental'),
      (d) => delete d.paths['/things/{thingId}'],
    );
    expect(changes).toEqual([expect.objectContaining({ rule: 'operation-removed', level: 'info', stability: 'experimental' })]);
  });

  test('when a stable operation is lowered to experimental, then that is an error', () => {
    expect(diff(undefined, (d) => (list(d)['x-stability-level'] = 'experimental'))).toEqual([
      expect.objectContaining({ rule: 'stability-level-decreased', level: 'error' }),
    ]);
  });

  test('when --deprecation-days is 20, then a sunset 30 days ahead is enough', () => {
    const changes = diff(undefined, (d) => Object.assign(list(d), { deprecated: true, 'x-sunset': day(30) }), { deprecationDays: 20 });
    expect(changes).toEqual([expect.objectContaining({ rule: 'operation-deprecated', level: 'info' })]);
  });
});

describe('spec diff: extension values are read or reported, never guessed', () => {
  const setList = (values: Json) => (d: Json) => Object.assign(list(d), values);
  test.each([
    ['a date that does not exist', '2030-02-30'],
    ['text', 'soon'],
    ['a date cut short', '2030-12'],
    ['a number', 20301205],
  ])('when x-sunset is %s, then sunset-invalid names the value and where it is', (_what, value) => {
    const changes = diff(setList({ deprecated: true, 'x-sunset': FAR }), setList({ deprecated: true, 'x-sunset': value }));
    expect(changes).toContainEqual(
      expect.objectContaining({
        rule: 'sunset-invalid',
        level: 'error',
        pointer: '/paths/~1things/get/x-sunset',
        message: expect.stringContaining(JSON.stringify(value)),
      }),
    );
    // Not compared as text: no "moved later" to a value that is no date.
    expect(changes.map((c) => c.rule)).not.toContain('operation-sunset-moved-later');
  });

  test.each([
    ['a YAML date', new Date(`${FAR}T00:00:00Z`)],
    ['an RFC 3339 date-time', `${FAR}T00:00:00Z`],
  ])('when x-sunset is %s, then it is read as its date', (_what, value) => {
    const changes = diff(setList({ deprecated: true, 'x-sunset': FAR }), setList({ deprecated: true, 'x-sunset': value }));
    expect(changes).toEqual([]);
  });

  test.each([
    ['alpha', 'beta', 'stability-level-increased'],
    ['draft', 'alpha', 'stability-level-increased'],
    ['beta', 'alpha', 'stability-level-decreased'],
    ['alpha', 'draft', 'stability-level-decreased'],
  ])('when x-stability-level goes from %s to %s, then it is %s', (from, to, rule) => {
    expect(diff(setList({ 'x-stability-level': from }), setList({ 'x-stability-level': to })).map((c) => c.rule)).toEqual([rule]);
  });

  test('when experimental becomes alpha, then nothing changed (the same rank)', () => {
    expect(diff(setList({ 'x-stability-level': 'experimental' }), setList({ 'x-stability-level': 'alpha' }))).toEqual([]);
  });

  test.each(['draft', 'alpha'])('when an operation is %s, then what breaks it is info', (level) => {
    const changes = diff(setList({ 'x-stability-level': level }), (d) => delete d.paths['/things'].get);
    expect(changes).toEqual([expect.objectContaining({ rule: 'operation-removed', level: 'info', stability: level })]);
  });

  test('when x-stability-level is not a level, then it is an error naming it, and the operation is graded as stable', () => {
    const changes = diff(undefined, (d) => {
      list(d)['x-stability-level'] = 'alfa';
      list(d).parameters[0].schema.maximum = 50;
    });
    expect(changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ rule: 'stability-level-invalid', level: 'error', message: expect.stringContaining('"alfa"') }),
        expect.objectContaining({ rule: 'request-maximum-lowered', level: 'error' }),
      ]),
    );
  });
});

describe('spec diff: the smaller cases graded as their clients meet them', () => {
  const oauth = (d: Json) => {
    d.components.securitySchemes.oauth = {
      type: 'oauth2',
      flows: { clientCredentials: { tokenUrl: 'https://auth.example/token', scopes: { 'things:read': 'Read', 'things:write': 'Write' } } },
    };
    list(d).security = [{ oauth: ['things:read', 'things:write'] }];
  };
  const rules = (changes: Change[]) => changes.map((c) => `${c.rule} ${c.level}`);

  test("when a scope is added to a scheme's catalogue, then nothing changed for any client", () => {
    const changes = diff(oauth, (d) => (d.components.securitySchemes.oauth.flows.clientCredentials.scopes['things:admin'] = 'Admin'));
    expect(rules(changes)).toEqual([]);
  });

  test("when an operation's requirement asks for a scope less, then every token that worked still works (info)", () => {
    expect(rules(diff(oauth, (d) => (list(d).security = [{ oauth: ['things:read'] }])))).toEqual(['security-requirement-loosened info']);
  });

  test('when a 3.1 version names roles on the bearer scheme against a 3.0 one, then they are stated (info), and a scheme changed with them is still an error', () => {
    const to31 = (d: Json) => {
      d.openapi = '3.1.0';
      list(d).security = [{ bearerAuth: ['things:read'] }];
    };
    expect(rules(diff(undefined, to31))).toEqual(['security-roles-stated info']);
    const changed = diff(undefined, (d) => {
      to31(d);
      d.components.securitySchemes.bearerAuth = { type: 'apiKey', in: 'header', name: 'Authorization' };
    });
    // Every operation meets the changed scheme; the one that names the roles states them too.
    expect([...new Set(rules(changed))].sort()).toEqual(['security-requirement-changed error', 'security-roles-stated info']);
  });

  test('when a 3.1 version adds a role to what an older 3.1 version asked for, then keys without it fail (error); one role less is info', () => {
    const with31 = (roles: string[]) => (d: Json) => {
      d.openapi = '3.1.0';
      list(d).security = [{ bearerAuth: roles }];
    };
    expect(rules(diff(with31([]), with31(['things:read'])))).toEqual(['security-requirement-changed error']);
    expect(rules(diff(with31(['things:read']), with31(['things:read', 'things:admin'])))).toEqual(['security-requirement-changed error']);
    expect(rules(diff(with31(['things:read', 'things:admin']), with31(['things:read'])))).toEqual(['security-requirement-loosened info']);
  });

  test("when an operation's requirement asks for a scope more, then tokens without it fail (error)", () => {
    const changes = diff(oauth, (d) => list(d).security[0].oauth.push('things:admin'));
    expect(rules(changes)).toEqual(['security-requirement-changed error']);
  });

  test("when the scheme's token URL changes, then it is a changed scheme, said so", () => {
    const changes = diff(
      oauth,
      (d) => (d.components.securitySchemes.oauth.flows.clientCredentials.tokenUrl = 'https://auth2.example/token'),
    );
    expect(changes).toEqual([
      expect.objectContaining({ rule: 'security-requirement-changed', message: expect.stringContaining('a security scheme changed') }),
    ]);
  });

  test('when the default of a required parameter changes, then no client of the old contract meets it', () => {
    const required = (d: Json) => Object.assign(list(d).parameters[0], { required: true });
    expect(rules(diff(required, (d) => (list(d).parameters[0].schema.default = 50)))).toEqual([]);
    // Optional, the same edit changes what a request that leaves it out means.
    expect(rules(diff(undefined, (d) => (list(d).parameters[0].schema.default = 50)))).toEqual(['request-default-changed error']);
  });

  test('when a path parameter is declared under another name than its template has, then it stays one parameter, renamed', () => {
    const changes = diff(undefined, (d) => (d.paths['/things/{thingId}'].get.parameters[0].name = 'id'));
    expect(rules(changes)).toEqual(['request-path-parameter-renamed warning']);
  });

  test.each([
    [
      'a response header string → integer: still text to a client that reads text',
      (d: Json) => (list(d).responses['200'].headers['X-Hint'].schema = { type: 'integer' }),
      'response-type-narrowed info',
    ],
    [
      'a response header integer → string: any text may come',
      (d: Json) => (list(d).responses['200'].headers['X-Total'].schema = { type: 'string' }),
      'response-type-widened error',
    ],
    [
      'a query parameter integer → string: more texts accepted',
      (d: Json) => (list(d).parameters[0].schema = { type: 'string' }),
      'request-type-widened info',
    ],
    [
      'a header parameter string → boolean: fewer texts accepted',
      (d: Json) => (list(d).parameters[2].schema = { type: 'boolean' }),
      'request-type-narrowed error',
    ],
  ])('when %s, then it is graded by the texts on the wire', (_what, edit, expected) => {
    expect(rules(diff(undefined, edit))).toContain(expected);
    expect(rules(diff(undefined, edit)).filter((r) => r.includes('type-changed'))).toEqual([]);
  });

  test('when a body gains a oneOf branch its requests cannot match, then it is only a branch added (info)', () => {
    const changes = diff(undefined, (d) => {
      const body = create(d).requestBody.content['application/json'];
      body.schema = { oneOf: [body.schema, { type: 'string' }] };
    });
    expect(rules(changes)).toEqual(['request-oneOf-branch-added info']);
  });

  test('when the added branch is told apart by a required property both fix, then it does not overlap', () => {
    const kind = (k: string, extra: Json = {}) => ({ type: 'object', required: ['kind'], properties: { kind: { const: k }, ...extra } });
    const changes = diff(
      (d) => (create(d).requestBody.content['application/json'].schema = { oneOf: [kind('cat')] }),
      (d) => (create(d).requestBody.content['application/json'].schema = { oneOf: [kind('cat'), kind('dog')] }),
    );
    expect(rules(changes)).toEqual(['request-oneOf-branch-added info']);
  });
});

describe('spec diff: a 3.1 webhook is an operation the API calls, graded the other way round', () => {
  const widen = (at: (d: Json) => Json) => (d: Json) => (at(d).properties.x = { type: 'number' });
  const payloadSchema = (d: Json) => hook(d).requestBody.content['application/json'].schema;
  const replySchema = (d: Json) => hook(d).responses['200'].content['application/json'].schema;

  test('when the payload allows more, then receivers may get what they do not handle (error), where a request allowing more is info', () => {
    expect(diff(undefined, widen(payloadSchema), { mode: 'webhook' })).toEqual([
      {
        level: 'error',
        rule: 'webhook-payload-type-changed',
        operation: 'POST webhook:thingCreated',
        pointer: '/webhooks/thingCreated/post/requestBody/content/application~1json/schema/properties/x/type',
        side: 'new',
        message: expect.stringMatching(/^payload: /),
      },
    ]);
    expect(diff(undefined, widen(reqBody)).map((c) => c.level)).toEqual(['error']); // string → number is a change either way
    const integerToNumber = (at: (d: Json) => Json): [Edit, Edit] => [
      (d: Json) => (at(d).properties.x = { type: 'integer' }),
      (d: Json) => (at(d).properties.x = { type: 'number' }),
    ];
    const [o, n] = integerToNumber(payloadSchema);
    expect(diff(o, n, { mode: 'webhook' }).map((c) => [c.rule, c.level])).toEqual([['webhook-payload-type-widened', 'error']]);
    const [ro, rn] = integerToNumber(replySchema);
    expect(diff(ro, rn, { mode: 'webhook' }).map((c) => [c.rule, c.level])).toEqual([['webhook-reply-type-widened', 'info']]);
  });

  test('when a webhook is beta in the old document, then what breaks it is a warning, marked so', () => {
    const changes = diff(
      (d) => (hook(d)['x-stability-level'] = 'beta'),
      (d) => delete hook(d).responses['410'],
      { mode: 'webhook' },
    );
    expect(changes).toEqual([expect.objectContaining({ rule: 'webhook-reply-status-removed', level: 'warning', stability: 'beta' })]);
  });

  test('when an operation under paths and a webhook share a name and a method, then each is compared with its own', () => {
    const both = (d: Json) => ({ ...asWebhooks(d), paths: d.paths });
    const o = base();
    const n = structuredClone(o);
    delete create(n).responses['201'].content['application/json'].schema.properties.y;
    const rules = diffDocuments(both(o), both(n), { today: TODAY }).map((c) => `${c.operation} ${c.rule}`);
    expect(rules.sort()).toEqual(['POST /things response-property-removed', 'POST webhook:thingCreated webhook-payload-property-removed']);
  });

  test('when spec/accepted-changes.yaml names a webhook, then the entry is read and matches its finding', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'accepted-')), 'accepted.yaml');
    writeFileSync(
      file,
      'accepted:\n  - rule: webhook-reply-status-removed\n    operation: POST webhook:thingCreated\n    reason: 410 is retired\n    expires: 2027-01-31\n',
    );
    const changes = diff(undefined, (d) => delete hook(d).responses['410'], { mode: 'webhook' });
    const { changes: marked, problems } = applyAccepted(changes, readAccepted(file), TODAY, file);
    expect(problems).toEqual([]);
    expect(marked).toEqual([expect.objectContaining({ rule: 'webhook-reply-status-removed', accepted: expect.anything() })]);
  });
});
